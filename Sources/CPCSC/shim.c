#include "CPCSC.h"

const SCARD_IO_REQUEST *CPCSC_pciT0(void) { return SCARD_PCI_T0; }
const SCARD_IO_REQUEST *CPCSC_pciT1(void) { return SCARD_PCI_T1; }
const SCARD_IO_REQUEST *CPCSC_pciRaw(void) { return SCARD_PCI_RAW; }
