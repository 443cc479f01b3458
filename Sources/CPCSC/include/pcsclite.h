/* Forwarder: <PCSC/winscard.h> includes <pcsclite.h> unqualified. */
#include <PCSC/pcsclite.h>
