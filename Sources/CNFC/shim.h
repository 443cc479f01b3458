#ifndef CNFC_SHIM_H
#define CNFC_SHIM_H
#include <stddef.h>
#include <nfc/nfc.h>
#include <nfc/nfc-types.h>

// The drivers this libnfc was built with. libnfc 1.8.0 keeps them in a list it exports but
// does not declare in <nfc/nfc.h>:
//   libnfc/nfc.c:135-140        struct nfc_driver_list { const struct nfc_driver_list *next;
//                                                        const struct nfc_driver *driver; };
//                               const struct nfc_driver_list *nfc_drivers = NULL;
//   libnfc/nfc.c:161-194,230-240 nfc_init() fills it (nfc_drivers_init) when it is empty;
//   libnfc/nfc.c:247-257        nfc_exit() frees it, whichever context is exited;
//   libnfc/nfc-internal.h:122-123 struct nfc_driver { const char *name; ... }.
// The two mirrors below repeat only the fields read here, in libnfc's order.
struct cnfc_driver_mirror {
    const char *name;
};
struct cnfc_driver_list_mirror {
    const struct cnfc_driver_list_mirror *next;
    const struct cnfc_driver_mirror *driver;
};
extern const struct cnfc_driver_list_mirror *nfc_drivers;

/// Up to `max` driver names (libnfc's strings, valid while the list lives) into `names`;
/// returns how many there are in all. Call only while a context from nfc_init is alive.
static inline size_t cnfc_driver_names(const char **names, size_t max) {
    size_t n = 0;
    for (const struct cnfc_driver_list_mirror *p = nfc_drivers; p != NULL; p = p->next) {
        if (n < max && p->driver != NULL) names[n] = p->driver->name;
        n++;
    }
    return n;
}
#endif
