/* measure-vs-c-transmit: the C baseline for `nfcbench measure apdu`.
 * Connects to READER and sends the SELECT of the NDEF application COUNT times with
 * SCardTransmit, then prints "<count> <seconds> <apdus per second>".
 * Built at run time by scripts/measure-vs-c: cc -O2 -I/usr/include/PCSC ... -lpcsclite */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <winscard.h>

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: %s READER COUNT\n", argv[0]); return 64; }
    long count = atol(argv[2]);
    SCARDCONTEXT ctx;
    SCARDHANDLE card;
    DWORD proto;
    LONG rv = SCardEstablishContext(SCARD_SCOPE_SYSTEM, NULL, NULL, &ctx);
    if (rv != SCARD_S_SUCCESS) { fprintf(stderr, "SCardEstablishContext: %s\n", pcsc_stringify_error(rv)); return 69; }
    rv = SCardConnect(ctx, argv[1], SCARD_SHARE_SHARED, SCARD_PROTOCOL_T0 | SCARD_PROTOCOL_T1, &card, &proto);
    if (rv != SCARD_S_SUCCESS) { fprintf(stderr, "SCardConnect: %s\n", pcsc_stringify_error(rv)); return 69; }
    const SCARD_IO_REQUEST *pci = proto == SCARD_PROTOCOL_T0 ? SCARD_PCI_T0 : SCARD_PCI_T1;
    BYTE select[] = {0x00, 0xA4, 0x04, 0x00, 0x07, 0xD2, 0x76, 0x00, 0x00, 0x85, 0x01, 0x01, 0x00};
    BYTE answer[258];
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long i = 0; i < count; i++) {
        DWORD len = sizeof answer;
        rv = SCardTransmit(card, pci, select, sizeof select, NULL, answer, &len);
        if (rv != SCARD_S_SUCCESS) { fprintf(stderr, "SCardTransmit: %s\n", pcsc_stringify_error(rv)); return 1; }
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    double s = (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
    printf("%ld %.6f %.1f\n", count, s, count / s);
    SCardDisconnect(card, SCARD_LEAVE_CARD);
    SCardReleaseContext(ctx);
    return 0;
}
