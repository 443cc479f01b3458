#ifndef CNFC_SHIM_H
#define CNFC_SHIM_H
#include <nfc/nfc.h>
#include <nfc/nfc-types.h>
#endif
