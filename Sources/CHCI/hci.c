#include "CHCI.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>

int chci_conn_handle(int dd, const uint8_t bdaddr[6], uint8_t type, uint16_t *handle) {
    /* The request is followed by room for one struct hci_conn_info, which the kernel fills
       (the idiom of BlueZ's hcitool). */
    struct hci_conn_info_req *cr = calloc(1, sizeof(*cr) + sizeof(struct hci_conn_info));
    if (cr == NULL) return -1;
    memcpy(&cr->bdaddr, bdaddr, 6);
    cr->type = type;
    int r = ioctl(dd, HCIGETCONNINFO, (unsigned long)cr);
    if (r == 0) *handle = cr->conn_info->handle;
    int saved = errno;
    free(cr);
    errno = saved;
    return r < 0 ? -1 : 0;
}
