/* SPDX-License-Identifier: BSD-3-Clause */
/* IPFIX exporter on libfixbuf's buffer exporter, our own bounded socket (include/spanbox/ipfix.h). */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <fixbuf/public.h>

#include "spanbox/ipfix.h"

/* The records as libfixbuf reads them (internal template = external template, packed: libfixbuf
 * takes the fields at the offsets of their lengths added up, in template order). */
struct rec_head {
	uint64_t octets, packets, start_ms, end_ms;
} __attribute__((packed));

struct rec_tail {
	uint32_t ingress;
	uint16_t sport, dport, tcp_flags, vlan;
	uint8_t proto, reason;
} __attribute__((packed));

/* The address pair of an IPv4 record: host order (libfixbuf writes them big-endian). */
struct rec_a4 {
	uint32_t src, dst;
} __attribute__((packed));

/* Biflows (RFC 5103): the reverse counts after the common fields. */
struct rec_rev {
	uint64_t octets, packets;
	uint16_t tcp_flags;
} __attribute__((packed));

/* A record is head, addresses (rec_a4 or 2 x 16 bytes), tail, then flowDirection (1 byte) for the
 * frames spanbox sent on a port, then rec_rev for a biflow: eight templates, one per combination
 * (sbx_ipfix_tid()). */
#define REC_MAX (sizeof(struct rec_head) + 32 + sizeof(struct rec_tail) + 1 + sizeof(struct rec_rev))

#define COMMON_HEAD {"octetDeltaCount", 8, 0}, {"packetDeltaCount", 8, 0}, \
	{"flowStartMilliseconds", 8, 0}, {"flowEndMilliseconds", 8, 0}
#define ADDR_V4 {"sourceIPv4Address", 4, 0}, {"destinationIPv4Address", 4, 0}
#define ADDR_V6 {"sourceIPv6Address", 16, 0}, {"destinationIPv6Address", 16, 0}
#define TAIL(interface) {interface, 4, 0}, {"sourceTransportPort", 2, 0}, \
	{"destinationTransportPort", 2, 0}, {"tcpControlBits", 2, 0}, {"vlanId", 2, 0}, \
	{"protocolIdentifier", 1, 0}, {"flowEndReason", 1, 0}
/* Records of frames spanbox sent on a port (flows.ports[].direction "tx"): the port is the
 * egressInterface (IE 14) and flowDirection (IE 61) is 1, egress (IANA IPFIX registry); nfdump
 * prints them as "out" and "dir". The RX templates keep ingressInterface (IE 10). */
#define TAIL_RX TAIL("ingressInterface")
#define TAIL_TX TAIL("egressInterface"), {"flowDirection", 1, 0}
/* RFC 5103 section 6: the reverse information elements, enterprise 29305 with the forward
 * elements' numbers; libfixbuf's information model names them "reverse" + the forward name */
#define REVERSE {"reverseOctetDeltaCount", 8, 0}, {"reversePacketDeltaCount", 8, 0}, \
	{"reverseTcpControlBits", 2, 0}

static fbInfoElementSpec_t spec_v4[] = {COMMON_HEAD, ADDR_V4, TAIL_RX, FB_IESPEC_NULL};
static fbInfoElementSpec_t spec_v6[] = {COMMON_HEAD, ADDR_V6, TAIL_RX, FB_IESPEC_NULL};
static fbInfoElementSpec_t spec_v4_tx[] = {COMMON_HEAD, ADDR_V4, TAIL_TX, FB_IESPEC_NULL};
static fbInfoElementSpec_t spec_v6_tx[] = {COMMON_HEAD, ADDR_V6, TAIL_TX, FB_IESPEC_NULL};
static fbInfoElementSpec_t spec_v4b[] = {COMMON_HEAD, ADDR_V4, TAIL_RX, REVERSE, FB_IESPEC_NULL};
static fbInfoElementSpec_t spec_v6b[] = {COMMON_HEAD, ADDR_V6, TAIL_RX, REVERSE, FB_IESPEC_NULL};
static fbInfoElementSpec_t spec_v4_txb[] = {COMMON_HEAD, ADDR_V4, TAIL_TX, REVERSE, FB_IESPEC_NULL};
static fbInfoElementSpec_t spec_v6_txb[] = {COMMON_HEAD, ADDR_V6, TAIL_TX, REVERSE, FB_IESPEC_NULL};

/* The templates, indexed by sbx_ipfix_tid() - SBX_IPFIX_TID_V4, and their record lengths. */
static const struct {
	fbInfoElementSpec_t *spec;
	size_t len;
} templates[8] = {
	{spec_v4, sizeof(struct rec_head) + 8 + sizeof(struct rec_tail)},
	{spec_v6, sizeof(struct rec_head) + 32 + sizeof(struct rec_tail)},
	{spec_v4_tx, sizeof(struct rec_head) + 8 + sizeof(struct rec_tail) + 1},
	{spec_v6_tx, sizeof(struct rec_head) + 32 + sizeof(struct rec_tail) + 1},
	{spec_v4b, sizeof(struct rec_head) + 8 + sizeof(struct rec_tail) + sizeof(struct rec_rev)},
	{spec_v6b, sizeof(struct rec_head) + 32 + sizeof(struct rec_tail) + sizeof(struct rec_rev)},
	{spec_v4_txb, sizeof(struct rec_head) + 8 + sizeof(struct rec_tail) + 1 + sizeof(struct rec_rev)},
	{spec_v6_txb, sizeof(struct rec_head) + 32 + sizeof(struct rec_tail) + 1 + sizeof(struct rec_rev)},
};

uint16_t sbx_ipfix_tid(int ipv6, int tx, int biflow)
{
	return (uint16_t)(SBX_IPFIX_TID_V4 + (ipv6 ? 1 : 0) + (tx ? 2 : 0) + (biflow ? 4 : 0));
}

struct sbx_ipfix {
	struct sbx_ipfix_params p;
	fbInfoModel_t *model;
	fbSession_t *session;
	fbExporter_t *exporter;
	fBuf_t *fbuf;
	struct sockaddr_storage addr;
	socklen_t addrlen;
	int fd;
	int need_templates;
	uint32_t in_msg;          /* records in the message being built */
	uint64_t msg_start_ns;    /* when its first record came */
	uint64_t last_tmpl_ns;
	uint64_t next_connect_ns;
	struct sbx_ipfix_stats s;
	uint8_t buf[65535];       /* libfixbuf writes each emitted message here */
};

static uint64_t ms_ns(uint32_t ms)
{
	return (uint64_t)ms * 1000000ull;
}

int sbx_ipfix_transport_parse(const char *name, enum sbx_ipfix_transport *out)
{
	if (name && strcmp(name, "udp") == 0)
		*out = SBX_IPFIX_UDP;
	else if (name && strcmp(name, "tcp") == 0)
		*out = SBX_IPFIX_TCP;
	else
		return -1;
	return 0;
}

static int add_template(struct sbx_ipfix *x, uint16_t tid, fbInfoElementSpec_t *spec, size_t reclen,
			char *err, size_t errlen)
{
	fbTemplate_t *t = fbTemplateAlloc(x->model);
	GError *ge = NULL;

	if (!fbTemplateAppendSpecArray(t, spec, 0, &ge) || !fbSessionAddTemplate(x->session, TRUE, tid, t, &ge) ||
	    !fbSessionAddTemplate(x->session, FALSE, tid, t, &ge)) {
		snprintf(err, errlen, "libfixbuf template %u: %s", tid, ge ? ge->message : "?");
		g_clear_error(&ge);
		return -1;
	}
	if (fbTemplateGetIELenOfMemBuffer(t) != reclen) {
		snprintf(err, errlen, "libfixbuf template %u: record of %u bytes, struct of %zu", tid,
			 (unsigned int)fbTemplateGetIELenOfMemBuffer(t), reclen);
		return -1;
	}
	return 0;
}

struct sbx_ipfix *sbx_ipfix_open(const struct sbx_ipfix_params *p, char *err, size_t errlen)
{
	struct addrinfo hints = {0}, *ai = NULL;
	struct sbx_ipfix *x;
	char port[8];
	size_t i;
	int rc;

	if (!p || !p->address || !*p->address) {
		snprintf(err, errlen, "address: missing");
		return NULL;
	}
	if (p->transport != SBX_IPFIX_UDP && p->transport != SBX_IPFIX_TCP) {
		snprintf(err, errlen, "transport: must be \"udp\" or \"tcp\"");
		return NULL;
	}
	if (p->max_message && (p->max_message < 256 || p->max_message > 65000)) {
		snprintf(err, errlen, "max_message: %u not in 256..65000", p->max_message);
		return NULL;
	}
	x = calloc(1, sizeof(*x));
	if (!x) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	x->p = *p;
	x->p.port = p->port ? p->port : 4739;
	x->p.template_period_s = p->template_period_s ? p->template_period_s : 60;
	x->p.max_message = p->max_message ? p->max_message : p->transport == SBX_IPFIX_UDP ? 1400 : 8192;
	x->p.flush_ms = p->flush_ms ? p->flush_ms : 200;
	x->p.connect_timeout_ms = p->connect_timeout_ms ? p->connect_timeout_ms : 100;
	x->p.send_timeout_ms = p->send_timeout_ms ? p->send_timeout_ms : 50;
	x->p.retry_ms = p->retry_ms ? p->retry_ms : 1000;
	x->p.address = NULL;
	x->fd = -1;
	x->need_templates = 1;
	snprintf(port, sizeof(port), "%u", x->p.port);
	hints.ai_socktype = p->transport == SBX_IPFIX_UDP ? SOCK_DGRAM : SOCK_STREAM;
	rc = getaddrinfo(p->address, port, &hints, &ai);
	if (rc != 0 || !ai) {
		snprintf(err, errlen, "address: %s: %s", p->address, gai_strerror(rc));
		free(x);
		return NULL;
	}
	memcpy(&x->addr, ai->ai_addr, ai->ai_addrlen);
	x->addrlen = ai->ai_addrlen;
	freeaddrinfo(ai);

	x->model = fbInfoModelAlloc();
	x->session = fbSessionAlloc(x->model);
	fbSessionSetDomain(x->session, p->domain);
	x->exporter = fbExporterAllocBuffer(x->buf, (uint16_t)x->p.max_message);
	for (i = 0; i < sizeof(templates) / sizeof(templates[0]); i++)
		if (add_template(x, (uint16_t)(SBX_IPFIX_TID_V4 + i), templates[i].spec, templates[i].len, err,
				 errlen) != 0)
			goto fail;
	x->fbuf = fBufAllocForExport(x->session, x->exporter);
	fBufSetAutomaticMode(x->fbuf, FALSE);
	if (p->transport == SBX_IPFIX_UDP) {
		x->fd = socket(x->addr.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (x->fd < 0 || connect(x->fd, (struct sockaddr *)&x->addr, x->addrlen) != 0) {
			snprintf(err, errlen, "address: UDP socket to %s: %s", p->address, strerror(errno));
			goto fail;
		}
	}
	return x;
fail:
	if (x->fd >= 0)
		close(x->fd);
	if (x->fbuf)
		fBufFree(x->fbuf); /* frees the session and the exporter too */
	else
		fbSessionFree(x->session); /* (the exporter of a buffer has no free function: a few bytes leak) */
	fbInfoModelFree(x->model);
	free(x);
	return NULL;
}

static void disconnect(struct sbx_ipfix *x, uint64_t now)
{
	close(x->fd);
	x->fd = -1;
	x->s.disconnects++;
	x->need_templates = 1;
	x->next_connect_ns = now + ms_ns(x->p.retry_ms);
}

/* Wait up to @p ms for @p ev on the socket: 1 ready, 0 not. */
static int wait_fd(int fd, short ev, uint32_t ms)
{
	struct pollfd pfd = {.fd = fd, .events = ev};

	return poll(&pfd, 1, (int)ms) == 1 && (pfd.revents & (ev | POLLERR | POLLHUP));
}

/* TCP: a connection within connect_timeout_ms, or a counted failure and a retry after retry_ms. */
static int tcp_connect(struct sbx_ipfix *x, uint64_t now)
{
	int fd, e = 0;
	socklen_t el = sizeof(e);

	if (now < x->next_connect_ns)
		return -1;
	fd = socket(x->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&x->addr, x->addrlen) != 0) {
		if (errno != EINPROGRESS || !wait_fd(fd, POLLOUT, x->p.connect_timeout_ms) ||
		    getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) != 0 || e != 0) {
			close(fd);
			fd = -1;
		}
	}
	if (fd < 0) {
		x->s.connect_failures++;
		x->next_connect_ns = now + ms_ns(x->p.retry_ms);
		return -1;
	}
	x->fd = fd;
	x->s.connects++;
	x->need_templates = 1;
	return 0;
}

/* TCP: whether the collector closed or reset the connection (a collector never sends: anything
 * readable is the end), so that a message is not handed to a socket whose peer is gone. */
static int peer_gone(int fd)
{
	char c;
	ssize_t n = recv(fd, &c, 1, MSG_DONTWAIT | MSG_PEEK);

	return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

/* Write one whole message: 0, or -1 (nothing or part written; TCP: the connection is dropped, a
 * message cut in the middle would corrupt the stream). */
static int write_msg(struct sbx_ipfix *x, const uint8_t *m, size_t len, uint64_t now)
{
	size_t off = 0;
	struct timespec t0;

	if (x->p.transport == SBX_IPFIX_TCP && peer_gone(x->fd)) {
		disconnect(x, now);
		return -1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (off < len) {
		ssize_t n = send(x->fd, m + off, len - off, MSG_DONTWAIT | MSG_NOSIGNAL);
		struct timespec t1;
		long waited;

		if (n > 0) {
			off += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
			x->s.send_errors++;
			break;
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		waited = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
		if (waited >= (long)x->p.send_timeout_ms ||
		    !wait_fd(x->fd, POLLOUT, x->p.send_timeout_ms - (uint32_t)waited))
			break;
	}
	if (off == len)
		return 0;
	if (x->p.transport == SBX_IPFIX_TCP)
		disconnect(x, now);
	return -1;
}

void sbx_ipfix_flush(struct sbx_ipfix *x, uint64_t now)
{
	GError *ge = NULL;
	size_t len;

	if (x->in_msg == 0)
		return;
	if (!fBufEmit(x->fbuf, &ge)) {
		g_clear_error(&ge);
		len = 0;
	} else {
		len = fbExporterGetMsgLen(x->exporter);
	}
	if (len > 0 && x->fd >= 0 && write_msg(x, x->buf, len, now) == 0) {
		x->s.messages_sent++;
		x->s.records_sent += x->in_msg;
	} else {
		x->s.messages_lost++;
		x->s.records_lost += x->in_msg;
	}
	x->in_msg = 0;
}

void sbx_ipfix_poll(struct sbx_ipfix *x, uint64_t now)
{
	if (x->in_msg > 0 && now - x->msg_start_ns >= ms_ns(x->p.flush_ms))
		sbx_ipfix_flush(x, now);
}

/* A new message: the connection (TCP), the templates at its start when due. -1: records lost. */
static int start_msg(struct sbx_ipfix *x, uint64_t now)
{
	GError *ge = NULL;

	if (x->fd >= 0 && x->p.transport == SBX_IPFIX_TCP && peer_gone(x->fd))
		disconnect(x, now);
	if (x->fd < 0 && (x->p.transport != SBX_IPFIX_TCP || tcp_connect(x, now) != 0))
		return -1;
	if (x->p.transport == SBX_IPFIX_UDP && now - x->last_tmpl_ns >= (uint64_t)x->p.template_period_s * 1000000000ull)
		x->need_templates = 1;
	fBufSetExportTime(x->fbuf, (uint32_t)time(NULL));
	if (x->need_templates) {
		/* libfixbuf's manual mode puts templates in a message of their own */
		int ok = fbSessionExportTemplates(x->session, &ge);

		if (!ok && g_error_matches(ge, FB_ERROR_DOMAIN, FB_ERROR_EOM)) { /* a message open: close it */
			g_clear_error(&ge);
			ok = fBufEmit(x->fbuf, &ge) && fbSessionExportTemplates(x->session, &ge);
		}
		if (ok)
			ok = fBufEmit(x->fbuf, &ge);
		g_clear_error(&ge);
		if (!ok || write_msg(x, x->buf, fbExporterGetMsgLen(x->exporter), now) != 0)
			return -1;
		x->need_templates = 0;
		x->last_tmpl_ns = now;
		x->s.template_sends++;
		fBufSetExportTime(x->fbuf, (uint32_t)time(NULL));
	}
	x->msg_start_ns = now;
	return 0;
}

static int append(struct sbx_ipfix *x, uint16_t tid, const void *rec, size_t len)
{
	GError *ge = NULL;

	if (fBufSetInternalTemplate(x->fbuf, tid, &ge) && fBufSetExportTemplate(x->fbuf, tid, &ge) &&
	    fBufAppend(x->fbuf, (uint8_t *)(uintptr_t)rec, len, &ge))
		return 0;
	if (ge && g_error_matches(ge, FB_ERROR_DOMAIN, FB_ERROR_EOM)) {
		g_clear_error(&ge);
		return 1; /* the message is full */
	}
	g_clear_error(&ge);
	return -1;
}

int sbx_ipfix_add(struct sbx_ipfix *x, const struct sbx_flow_record *r, uint64_t now)
{
	const struct sbx_flow_key *k = &r->key;
	const int v6 = k->ipver != 4, tx = k->dir == SBX_FLOW_DIR_TX;
	uint8_t rec[REC_MAX];
	struct rec_head head;
	struct rec_tail tail;
	struct rec_a4 a4;
	size_t len = 0;
	uint16_t tid = sbx_ipfix_tid(v6, tx, r->biflow);
	int rc, tries;

	head.octets = r->bytes;
	head.packets = r->packets;
	head.start_ms = r->first_ns / 1000000ull;
	head.end_ms = r->last_ns / 1000000ull;
	tail.ingress = k->port; /* egressInterface in the TX templates */
	tail.sport = k->sport;
	tail.dport = k->dport;
	tail.tcp_flags = r->tcp_flags;
	tail.vlan = k->vlan;
	tail.proto = k->proto;
	tail.reason = r->end_reason;
	memcpy(rec, &head, sizeof(head)), len += sizeof(head);
	if (!v6) {
		a4.src = (uint32_t)k->src[0] << 24 | (uint32_t)k->src[1] << 16 | (uint32_t)k->src[2] << 8 | k->src[3];
		a4.dst = (uint32_t)k->dst[0] << 24 | (uint32_t)k->dst[1] << 16 | (uint32_t)k->dst[2] << 8 | k->dst[3];
		memcpy(rec + len, &a4, sizeof(a4)), len += sizeof(a4);
	} else {
		memcpy(rec + len, k->src, 16), len += 16;
		memcpy(rec + len, k->dst, 16), len += 16;
	}
	memcpy(rec + len, &tail, sizeof(tail)), len += sizeof(tail);
	if (tx)
		rec[len++] = 1; /* flowDirection: egress */
	if (r->biflow) {
		struct rec_rev rev = {r->rev_bytes, r->rev_packets, r->rev_tcp_flags};

		memcpy(rec + len, &rev, sizeof(rev)), len += sizeof(rev);
	}
	/* up to 3 appends: the message can be full (sent, a new one started), and libfixbuf refuses
	 * the first append after a template message once more with "end of message" */
	for (tries = 0; tries < 3; tries++) {
		if (x->in_msg == 0 && start_msg(x, now) != 0)
			break;
		rc = append(x, tid, rec, len);
		if (rc == 0) {
			x->in_msg++;
			return 0;
		}
		if (rc < 0)
			break;
		sbx_ipfix_flush(x, now); /* full: send it, the record starts the next one */
	}
	x->s.records_lost++;
	return -1;
}

void sbx_ipfix_stats(const struct sbx_ipfix *x, struct sbx_ipfix_stats *out)
{
	*out = x->s;
}

void sbx_ipfix_close(struct sbx_ipfix *x, uint64_t now)
{
	if (!x)
		return;
	sbx_ipfix_flush(x, now);
	if (x->fd >= 0)
		close(x->fd);
	fBufFree(x->fbuf);
	fbInfoModelFree(x->model);
	free(x);
}
