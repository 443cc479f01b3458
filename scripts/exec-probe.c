/* exec-probe: an LD_PRELOAD library for `nfcbench bench all`. It times a process from its
 * spawn to its first call of nfc_open or SCardEstablishContext: the parent puts the
 * CLOCK_MONOTONIC nanoseconds of the spawn in NFCBENCH_SPAWN_NS, and the probe appends
 * "<function> <microseconds>" to the file named by NFCBENCH_PROBE_OUT, then calls the real
 * function (dlsym RTLD_NEXT). Every libnfc and pcsc-lite client is timed the same way.
 * Built at run time: cc -O2 -shared -fPIC -I/usr/include/PCSC exec-probe.c -o exec-probe.so -ldl */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <nfc/nfc.h>
#include <winscard.h>

static void note(const char *what) {
    static int done;
    if (done) return;
    done = 1;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    const char *spawn = getenv("NFCBENCH_SPAWN_NS"), *out = getenv("NFCBENCH_PROBE_OUT");
    if (!spawn || !out) return;
    long long ns = (long long)now.tv_sec * 1000000000LL + now.tv_nsec - atoll(spawn);
    FILE *f = fopen(out, "a");
    if (!f) return;
    fprintf(f, "%s %.1f\n", what, ns / 1000.0);
    fclose(f);
}

nfc_device *nfc_open(nfc_context *context, const nfc_connstring connstring) {
    note("nfc_open");
    nfc_device *(*real)(nfc_context *, const nfc_connstring) = dlsym(RTLD_NEXT, "nfc_open");
    return real(context, connstring);
}

LONG SCardEstablishContext(DWORD scope, LPCVOID reserved1, LPCVOID reserved2, LPSCARDCONTEXT context) {
    note("SCardEstablishContext");
    LONG (*real)(DWORD, LPCVOID, LPCVOID, LPSCARDCONTEXT) = dlsym(RTLD_NEXT, "SCardEstablishContext");
    return real(scope, reserved1, reserved2, context);
}
