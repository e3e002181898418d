/* SPDX-License-Identifier: BSD-3-Clause */
/* Link state of interfaces moved into another network namespace (see netns_link.c). */
#ifndef SPANBOX_NETNS_LINK_H
#define SPANBOX_NETNS_LINK_H

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

#endif
