#ifndef CPCSC_H
#define CPCSC_H
#include <PCSC/winscard.h>
#include <PCSC/reader.h>

/// SCARD_PCI_T0 / SCARD_PCI_T1 are macros over a global that Swift cannot import.
const SCARD_IO_REQUEST *CPCSC_pciT0(void);
const SCARD_IO_REQUEST *CPCSC_pciT1(void);
const SCARD_IO_REQUEST *CPCSC_pciRaw(void);
#endif
