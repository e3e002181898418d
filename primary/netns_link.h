/* SPDX-License-Identifier: BSD-3-Clause */
/* Link state of interfaces moved into another network namespace (see netns_link.c). */
#ifndef SPANBOX_NETNS_LINK_H
#define SPANBOX_NETNS_LINK_H

#include <stdbool.h>

/**
 * Open a datagram socket inside network namespace @p netns (/var/run/netns/<netns>).
 * @return the socket (caller closes it), or -1 when the namespace does not exist (yet).
 */
int sbx_netns_socket(const char *netns);

/**
 * Ask, through a socket of the interface's namespace, whether @p iface is up and running.
 * @return 1 up, 0 down, -1 when the interface is not in that namespace.
 */
int sbx_netns_link_up(int sock, const char *iface);

/**
 * Set or clear IFF_UP of @p iface through a socket of its namespace (what `ip link set up|down`
 * does there). @return 0, or -1 with errno set (no such interface there, not permitted).
 */
int sbx_netns_set_link(int sock, const char *iface, bool up);

#endif
