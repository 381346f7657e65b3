#pragma once
/* StrapBluetooth's C companion, the only target that uses it. */
#include <stdint.h>

/* HCI connection lookup for the RSSI sampler (docs/operations.md#link-quality-rssi).
   HCIGETCONNINFO is an ioctl macro over a struct with a flexible array member, which Swift
   cannot import. Only the kernel ABI is used here, no libbluetooth symbol: CHCI itself needs
   no -lbluetooth (StrapBluetooth, its one user, links libbluetooth through CBluetooth). */

/* LE and BR/EDR link types of struct hci_conn_info_req (LE_LINK, ACL_LINK). */
#define CHCI_LE_LINK 0x80
#define CHCI_ACL_LINK 0x01

/* ioctl(dd, HCIGETCONNINFO) for the connection of `type` to `bdaddr` (6 bytes, least
   significant first, as bdaddr_t). 0 and *handle, or -1 with errno (ENOENT: no such
   connection). */
int chci_conn_handle(int dd, const uint8_t bdaddr[6], uint8_t type, uint16_t *handle);
