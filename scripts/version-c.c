/* version-c: the C floor for `nfcbench version` in `nfcbench bench all`: a process linked
 * with libnfc and pcsc-lite that prints their versions the way nfcbench does, and exits.
 * Built at run time: cc -O2 -I/usr/include/PCSC version-c.c -o version-c -lnfc -Wl,--no-as-needed -lpcsclite */
#include <stdio.h>
#include <nfc/nfc.h>
#include <pcsclite.h>

int main(void) {
    printf("version-c\nlibnfc %s\npcsc-lite %s\n", nfc_version(), PCSCLITE_VERSION_NUMBER);
    return 0;
}
