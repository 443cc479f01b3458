/* Forwarder: <PCSC/pcsclite.h> includes <wintypes.h> unqualified. */
#include <PCSC/wintypes.h>
