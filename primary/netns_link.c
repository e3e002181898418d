/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Link state of a tap interface that the launcher moved into a network namespace (ports[].netns).
 * The tap PMD reads the link with ioctl(SIOCGIFFLAGS) on a socket of the primary's namespace,
 * where the interface no longer exists, so it reports the link down while frames flow. We ask the
 * kernel from a socket created inside the namespace instead: a socket stays in the namespace it was
 * created in, and setns() in a short-lived thread changes only that thread's namespace.
 */
#include <fcntl.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "netns_link.h"

struct ns_arg {
	int nsfd;
	int sock;
};

/* Thread body: enter the namespace, open a datagram socket there. */
static void *open_in_ns(void *arg)
{
	struct ns_arg *a = arg;

	a->sock = setns(a->nsfd, CLONE_NEWNET) == 0 ? socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0) : -1;
	return NULL;
}

int sbx_netns_socket(const char *netns)
{
	char path[128];
	struct ns_arg a = { .sock = -1 };
	pthread_t t;

	snprintf(path, sizeof(path), "/var/run/netns/%s", netns);
	a.nsfd = open(path, O_RDONLY | O_CLOEXEC);
	if (a.nsfd < 0)
		return -1;
	if (pthread_create(&t, NULL, open_in_ns, &a) == 0)
		pthread_join(t, NULL);
	close(a.nsfd);
	return a.sock;
}

int sbx_netns_link_up(int sock, const char *iface)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", iface);
	if (ioctl(sock, SIOCGIFFLAGS, &ifr) != 0)
		return -1;
	return (ifr.ifr_flags & IFF_UP) && (ifr.ifr_flags & IFF_RUNNING);
}

int sbx_netns_set_link(int sock, const char *iface, bool up)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", iface);
	if (ioctl(sock, SIOCGIFFLAGS, &ifr) != 0)
		return -1;
	if (up)
		ifr.ifr_flags |= IFF_UP;
	else
		ifr.ifr_flags &= ~IFF_UP;
	return ioctl(sock, SIOCSIFFLAGS, &ifr) == 0 ? 0 : -1;
}
