/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The REST server: authentication, routing (route tables of api_*.c), request bodies, errors,
 * and static files for what no route matches. Every API response is JSON, errors included:
 * {"error":{"code":N,"message":"...","field":"..."?}}.
 *
 * Threading mode: MHD_USE_INTERNAL_POLLING_THREAD (+ epoll where available, else poll), without
 * MHD_USE_THREAD_PER_CONNECTION and without a thread pool: ONE thread accepts, reads and runs
 * every handler, one after the other. Why:
 *  - handlers on this thread are short, non-blocking reads of shared memory (microseconds), so one
 *    thread keeps up with any realistic number of operators and scrapers; mgmt runs on a core the
 *    workers share, and more threads would only add contention there;
 *  - serialized handlers never race each other: no locking in the api_*.c files, and a handler
 *    may keep static state;
 *  - the SQLite connection is also used by the main thread (event import), so it is opened
 *    SQLITE_OPEN_FULLMUTEX (db.c): that is the only sharing.
 * Nothing on this thread waits: what may (a change waits up to seconds for the primary, a worker
 * restart or a link change up to SBX_CTL_TIMEOUT_MS, the copy probe seconds) runs on a lane
 * (enum mgmt_lane, api.h): its connection is suspended (MHD_ALLOW_SUSPEND_RESUME), the lane's
 * thread runs the job and resumes it with the answer, and this thread answers it on its next turn
 * (see "Deferred answers" below). Static files are sent with MHD_create_response_from_fd
 * (sendfile), without copying them through this thread's memory. Keep this mode unless a
 * measurement shows the single thread saturating.
 *
 * Connections (the guard below): one idle or slow client must never hold a connection another
 * client needs. libmicrohttpd 0.9.75 only has an idle timeout (reset by every byte) and a
 * connection limit at which it stops accepting, so 64 idle connections used to queue every new
 * client behind them, and clients sending a header byte a second held the whole limit for ever.
 * The guard tracks every connection (MHD_OPTION_NOTIFY_CONNECTION) in a table of its own, with
 * its client address and its phase: waiting for a (complete) request since it opened or since its
 * previous answer was sent; answering since its request was complete; suspended for a lane. It
 * closes a connection with shutdown(2) of its socket (libmicrohttpd then sees the end of stream
 * and closes it itself, NOTIFY_CONNECTION CLOSED first, close(2) of the fd after, so a tracked fd
 * is never reused while it is in the table):
 *  - at the limits, from the accept (this thread): when a new connection makes its address hold
 *    more than share_max, or all of them more than high, the oldest waiting connection of the
 *    address holding the most (else the oldest waiting one at all) is closed: new connections
 *    always get in, a flood evicts its own connections first, and no address holds more than
 *    share_max connections (a per-address limit that never refuses the local client: mgmt
 *    listens on 127.0.0.1, so every local process is the same address);
 *  - at the deadlines, from mgmt_http_sweep() (the main thread, every 100 ms): a request not
 *    complete MGMT_HTTP_REQUEST_S after the connection opened or after its previous answer, an
 *    answer not sent MGMT_HTTP_ANSWER_S after its request (a client that does not read).
 * The table's mutex is taken by this thread (accept, close, phase changes) and by the sweep.
 *
 * HTTPS (ctx->tls_cert set): libmicrohttpd's GnuTLS, TLS 1.2 and 1.3 only (MGMT_TLS_PRIORITIES);
 * a plain HTTP request to that port gets no answer (the handshake fails).
 *
 * Order of checks for one request: (1) the role of its bearer token (auth.h): a method other than
 * GET/HEAD without the admin token, or a GET/HEAD of /api or /metrics without a token of a role
 * when reads are not open (mgmt listens on another address than 127.0.0.1; the page's static
 * files stay public), is answered 401, a viewer token on such a
 * method 403 (the body is read and dropped, no handler runs, whatever the path); a wrong token
 * counts as a failure of its client address, and past MGMT_AUTH_FAIL_MAX a minute its 401 waits
 * MGMT_AUTH_SLOW_MS on MGMT_LANE_SLOW (the connection suspended: this thread never waits);
 * (2) a body over MAX_BODY is 413; (3) route match: handler, or 405 with Allow when the path matches with
 * another method; (4) GET/HEAD of a path outside /api and /metrics: a static file; (5) 404.
 */
#include <ctype.h>
#include <errno.h>
#include <dirent.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <cjson/cJSON.h>
#include <microhttpd.h>

#include "api.h"
#include "attach.h"
#include "auth.h"
#include "db.h"
#include "http.h"
#include "static.h"
#include "tls.h"
#include "validate.h"

#define MAX_BODY (64 * 1024) /* bytes of request body accepted; a longer body is refused (413) */
/* the maps' routes (api_maps.c): a whole rule table of 65,536 rules in one request (about 8 MiB
 * as JSON with every field; 32 MiB leaves room for spacing) */
#define MAPS_MAX_BODY (32 * 1024 * 1024)
#define MAPS_PREFIX "/api/v1/maps"
/* The request line's URL (path and query, as received) and the header fields (names, values and
 * 4 bytes each for ": " and CRLF) accepted, in bytes; longer ones are answered 414 / 431 in JSON.
 * libmicrohttpd's own limit is its per-connection memory (CONN_MEMORY): a request past that is
 * answered by libmicrohttpd itself (HTML, as it has no hook for it), so that limit sits well
 * above ours. */
#define MAX_URL (16 * 1024)
#define MAX_HEADERS (32 * 1024)
#define CONN_MEMORY (128 * 1024) /* MHD_OPTION_CONNECTION_MEMORY_LIMIT (libmicrohttpd: 32 KiB) */
#define FD_MARGIN 64         /* fds kept for mgmt itself (database, history, probe, logs) */

/** Per connection: the request body, and whether it waits for a lane. */
struct conn_state {
	char *body;        /**< malloc'd as it grows, NUL-terminated */
	size_t len, cap;
	bool too_big;      /**< the body was longer than max_body */
	size_t max_body;   /**< bytes of body accepted: MAX_BODY, or MAPS_MAX_BODY under MAPS_PREFIX */
	bool denied;       /**< needs the token and lacks it: the body is dropped, the answer is 401 */
	bool bad_token;    /**< (denied) a token was sent, but not the right one */
	bool slow;         /**< (bad_token) past MGMT_AUTH_FAIL_MAX failures: the 401 waits on a lane */
	bool forbidden;    /**< a viewer's token on a method only the admin may use: 403, body dropped */
	enum mgmt_role role; /**< the role of the request's token */
	bool suspended;    /**< waiting for a lane; the next call answers with @c answer */
	bool deferred;     /**< was handed to a lane (counted in defer.unsent until completed) */
	struct mgmt_answer answer; /**< set by the lane (defer.lock) before it resumes the connection */
};

/* ------------------------------------------------------------------------------------------ */
/* The connection guard (see the top of the file). */

enum conn_phase {
	PH_FREE,      /**< connection entry unused */
	PH_WAITING,   /**< waiting for a complete request, since @c since_ns */
	PH_ANSWERING, /**< request complete, answer being made or sent, since @c since_ns */
	PH_SUSPENDED, /**< waiting for a lane (its work is bounded in time): no deadline */
};

/** One tracked connection (MHD_CONNECTION_NOTIFY_STARTED .. CLOSED). */
struct guard_conn {
	enum conn_phase phase;
	int fd;            /**< its socket, owned by libmicrohttpd */
	unsigned int addr; /**< index in guard.addrs */
	bool shut;         /**< shutdown() done: libmicrohttpd closes it on its next turn */
	uint64_t since_ns; /**< CLOCK_MONOTONIC (sbx_now_ns) start of the current phase */
	struct sockaddr_storage peer; /**< the client's address and port, as accepted */
	socklen_t peer_len;           /**< its length, 0 when unknown */
};

/** One client address (the port left out) with tracked connections. */
struct guard_addr {
	unsigned char key[1 + 16]; /**< family, then the IPv4 or IPv6 address */
	unsigned int tracked;      /**< entries of guard.conns naming it (0 = entry unused) */
	unsigned int live;         /**< of those, not shut */
};

static struct {
	pthread_mutex_t lock;
	struct guard_conn *conns; /**< cap entries */
	struct guard_addr *addrs; /**< cap entries */
	unsigned int cap;
	unsigned int live;        /**< tracked connections not shut */
	struct mgmt_http_limits lim;
	uint64_t evicted;         /**< closed at the limits, since start */
	uint64_t evicted_logged;  /**< of those, logged already */
	uint64_t log_ns;          /**< when they were last logged */
	uint64_t stale;           /**< entries found stale (their fd reused): shut without a shutdown(), since start */
	uint64_t stale_logged;    /**< of those, logged already */
	struct mgmt_http_closes closed;        /**< connections closed by the guard, by reason, since start */
	struct mgmt_http_closes closed_logged; /**< of those, logged already */
	uint64_t waiting_log_ns;  /**< when deadline closes of waiting connections were last logged */
} guard = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* Calls of a suspended request's handler before its lane answered (see handle()), and how many
 * of those were logged; written by the HTTP thread, read by the sweep. */
static unsigned long early_calls, early_logged;

/*
 * Close @p e's connection (guard.lock held), unless its fd no longer is that connection: an entry
 * whose socket's peer differs from the one accepted is stale (the fd number now belongs to
 * another connection or file), and a shutdown() would cut an innocent client's request short
 * ("Empty reply from server"). A stale entry is marked shut without a shutdown(), and stays
 * tracked (its table entry and address count) until libmicrohttpd's CLOSED for it: libmicrohttpd
 * still holds the entry as that connection's socket context, and freeing it here would let a new
 * connection take it, whose counts the old connection's CLOSED would then decrement.
 */
static void guard_shut(struct guard_conn *e)
{
	struct sockaddr_storage now;
	socklen_t len = sizeof(now);

	int rc = e->peer_len != 0 ? getpeername(e->fd, (struct sockaddr *)&now, &len) : -1;

	/* stale: another peer on that fd, or the fd is no socket any more (a disconnected socket of
	 * ours says ENOTCONN: it is still ours, and shutdown() of it is harmless) */
	if (e->peer_len != 0 && ((rc == 0 && (len != e->peer_len || memcmp(&now, &e->peer, len) != 0)) ||
				 (rc != 0 && (errno == ENOTSOCK || errno == EBADF)))) {
		guard.stale++;
		e->shut = true;
		guard.live--;
		guard.addrs[e->addr].live--;
		return;
	}
	shutdown(e->fd, SHUT_RDWR);
	e->shut = true;
	guard.live--;
	guard.addrs[e->addr].live--;
}

/* The connection to close to make room for @p fresh: the oldest waiting one among the addresses
 * holding the most live connections (ties: many addresses with one each, an IPv6 range), else the
 * oldest waiting one at all; NULL if none waits. */
static struct guard_conn *guard_victim(const struct guard_conn *fresh)
{
	struct guard_conn *best = NULL, *any = NULL;
	unsigned int i, top = 0;

	for (i = 0; i < guard.cap; i++)
		if (guard.addrs[i].live > top)
			top = guard.addrs[i].live;
	for (i = 0; i < guard.cap; i++) {
		struct guard_conn *e = &guard.conns[i];

		if (e == fresh || e->phase != PH_WAITING || e->shut)
			continue;
		if (any == NULL || e->since_ns < any->since_ns)
			any = e;
		if (guard.addrs[e->addr].live == top && (best == NULL || e->since_ns < best->since_ns))
			best = e;
	}
	return best != NULL ? best : any;
}

/* The key of @p sa: family and address, without the port. */
static void guard_key(const struct sockaddr *sa, unsigned char key[17])
{
	memset(key, 0, 17);
	if (sa == NULL)
		return;
	key[0] = (unsigned char)sa->sa_family;
	if (sa->sa_family == AF_INET)
		memcpy(key + 1, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	else if (sa->sa_family == AF_INET6)
		memcpy(key + 1, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
}

/* MHD_OPTION_NOTIFY_CONNECTION: track a new connection (and make room), forget a closed one. */
static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			  enum MHD_ConnectionNotificationCode toe)
{
	struct guard_conn *e = NULL;

	(void)cls;
	if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
		e = *socket_context;
		if (e == NULL)
			return;
		pthread_mutex_lock(&guard.lock);
		if (!e->shut) {
			guard.live--;
			guard.addrs[e->addr].live--;
		}
		guard.addrs[e->addr].tracked--;
		e->phase = PH_FREE;
		pthread_mutex_unlock(&guard.lock);
		*socket_context = NULL;
		return;
	}
	if (toe != MHD_CONNECTION_NOTIFY_STARTED)
		return;
	{
		const union MHD_ConnectionInfo *fi = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		const union MHD_ConnectionInfo *ai = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
		unsigned char key[17];
		unsigned int i, a = guard.cap, freea = guard.cap;

		if (fi == NULL)
			return; /* untracked: libmicrohttpd's own idle timeout still applies */
		guard_key(ai != NULL ? ai->client_addr : NULL, key);
		pthread_mutex_lock(&guard.lock);
		for (i = 0; i < guard.cap && e == NULL; i++)
			if (guard.conns[i].phase == PH_FREE)
				e = &guard.conns[i];
		for (i = 0; i < guard.cap && a == guard.cap; i++) {
			if (guard.addrs[i].tracked == 0) {
				if (freea == guard.cap)
					freea = i;
			} else if (memcmp(guard.addrs[i].key, key, sizeof(key)) == 0) {
				a = i;
			}
		}
		if (a == guard.cap)
			a = freea;
		if (e == NULL || a == guard.cap) { /* cannot happen: cap > libmicrohttpd's limit */
			pthread_mutex_unlock(&guard.lock);
			return;
		}
		if (guard.addrs[a].tracked == 0) {
			memcpy(guard.addrs[a].key, key, sizeof(key));
			guard.addrs[a].live = 0;
		}
		*e = (struct guard_conn){ .phase = PH_WAITING, .fd = fi->connect_fd, .addr = a,
					  .since_ns = sbx_now_ns() };
		{ /* the peer as the socket says it: what guard_shut() checks the fd against */
			socklen_t len = sizeof(e->peer);

			if (getpeername(fi->connect_fd, (struct sockaddr *)&e->peer, &len) == 0 && len <= sizeof(e->peer))
				e->peer_len = len;
		}
		guard.addrs[a].tracked++;
		guard.addrs[a].live++;
		guard.live++;
		*socket_context = e;
		while (guard.addrs[a].live > guard.lim.share_max || guard.live > guard.lim.high) {
			struct guard_conn *v = guard_victim(e);

			if (v == NULL)
				break;
			guard_shut(v);
			guard.evicted++;
		}
		pthread_mutex_unlock(&guard.lock);
	}
}

/* @p c enters @p phase, from now. */
static void guard_phase(struct MHD_Connection *c, enum conn_phase phase)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct guard_conn *e = ci != NULL ? ci->socket_context : NULL;

	if (e == NULL)
		return;
	pthread_mutex_lock(&guard.lock);
	e->phase = phase;
	e->since_ns = sbx_now_ns();
	pthread_mutex_unlock(&guard.lock);
}

bool mgmt_http_overdue(uint64_t now_ns, uint64_t since_ns, uint64_t max_ns)
{
	/* a stamp at or after the clock read (another thread stamped the entry after it) is fresh:
	 * the unsigned difference would wrap to about 2^64 and look overdue */
	return since_ns < now_ns && now_ns - since_ns >= max_ns;
}

/* Test hook (tests/e2e/55d_http_guard.sh): SBX_TEST_SWEEP_DELAY_MS=N makes each sweep wait N ms
 * (1..1000) before it takes the table's lock: the window in which the HTTP thread stamps entries
 * while the sweep is on its way to the lock, widened. */
static void sweep_test_delay(void)
{
	static long ms = -1;

	if (ms < 0) {
		const char *v = getenv("SBX_TEST_SWEEP_DELAY_MS");

		ms = v != NULL ? strtol(v, NULL, 10) : 0;
		if (ms < 0 || ms > 1000)
			ms = 0;
	}
	if (ms > 0)
		nanosleep(&(struct timespec){ ms / 1000, (ms % 1000) * 1000000L }, NULL);
}

void mgmt_http_sweep(void)
{
	uint64_t now, evicted = 0, stale, waiting = 0, answering = 0;
	unsigned int i;

	sweep_test_delay();
	pthread_mutex_lock(&guard.lock);
	now = sbx_now_ns(); /* under the lock: no entry is stamped after it and before the checks */
	for (i = 0; i < guard.cap; i++) {
		struct guard_conn *e = &guard.conns[i];
		uint64_t max_s;

		if (e->shut || (e->phase != PH_WAITING && e->phase != PH_ANSWERING))
			continue; /* free, closing, or waiting for a lane */
		max_s = e->phase == PH_WAITING ? MGMT_HTTP_REQUEST_S : MGMT_HTTP_ANSWER_S;
		if (!mgmt_http_overdue(now, e->since_ns, max_s * 1000000000ULL))
			continue;
		if (e->phase == PH_WAITING)
			guard.closed.deadline_waiting++;
		else
			guard.closed.deadline_answering++;
		guard_shut(e);
	}
	/* at most one line per 10 s, and only under pressure (a deadline closing an idle keep-alive
	 * connection of a browser is normal) */
	if (guard.evicted != guard.evicted_logged && now - guard.log_ns >= 10000000000ULL) {
		evicted = guard.evicted - guard.evicted_logged;
		guard.evicted_logged = guard.evicted;
		guard.log_ns = now;
	}
	/* an answer not sent in time is worth a line each sweep (a client that does not read, or a
	 * bug); idle keep-alive connections closed by the request deadline once a minute at most */
	answering = guard.closed.deadline_answering - guard.closed_logged.deadline_answering;
	guard.closed_logged.deadline_answering = guard.closed.deadline_answering;
	if (guard.closed.deadline_waiting != guard.closed_logged.deadline_waiting &&
	    now - guard.waiting_log_ns >= 60000000000ULL) {
		waiting = guard.closed.deadline_waiting - guard.closed_logged.deadline_waiting;
		guard.closed_logged.deadline_waiting = guard.closed.deadline_waiting;
		guard.waiting_log_ns = now;
	}
	stale = guard.stale - guard.stale_logged;
	guard.stale_logged = guard.stale;
	guard.closed.evicted = guard.evicted;
	guard.closed.stale = guard.stale;
	pthread_mutex_unlock(&guard.lock);
	if (evicted > 0)
		fprintf(stderr, "spanbox-mgmt: http: connection limits reached: closed %llu idle connections "
			"to make room for new ones\n", (unsigned long long)evicted);
	if (answering > 0)
		fprintf(stderr, "spanbox-mgmt: http: answer deadline: closed %llu connection(s) whose answer was "
			"not sent within %d s of the request\n", (unsigned long long)answering, MGMT_HTTP_ANSWER_S);
	if (waiting > 0)
		fprintf(stderr, "spanbox-mgmt: http: request deadline: closed %llu connection(s) without a complete "
			"request within %d s (idle keep-alive connections, slow clients; counted since the last "
			"such line)\n", (unsigned long long)waiting, MGMT_HTTP_REQUEST_S);
	if (__atomic_load_n(&early_calls, __ATOMIC_RELAXED) != early_logged) {
		unsigned long n = __atomic_load_n(&early_calls, __ATOMIC_RELAXED);

		fprintf(stderr, "spanbox-mgmt: http: %lu suspended request(s) called before their lane answered: "
			"suspended again\n", n - early_logged);
		early_logged = n;
	}
	if (stale > 0)
		fprintf(stderr, "spanbox-mgmt: http: %llu connection entries were stale (their fd reused): marked "
			"closed until libmicrohttpd closes them, no shutdown()\n", (unsigned long long)stale);
}

void mgmt_http_closes(struct mgmt_http_closes *out)
{
	pthread_mutex_lock(&guard.lock);
	*out = guard.closed;
	out->evicted = guard.evicted;
	out->stale = guard.stale;
	pthread_mutex_unlock(&guard.lock);
}

const struct mgmt_http_limits *mgmt_http_limits(void)
{
	return &guard.lim;
}

/* The number of fds this process has open (/proc/self/fd), -1 if unknown. */
static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	if (d == NULL)
		return -1;
	while ((de = readdir(d)) != NULL)
		n += de->d_name[0] != '.';
	closedir(d);
	return n - 1; /* the directory's own fd */
}

/* Size the limits to the fds this process may open (raising its soft RLIMIT_NOFILE up to the hard
 * one), and allocate the table. -1 when out of memory. */
static int guard_init(char *err, size_t errlen)
{
	struct rlimit rl;
	int nopen = open_fds();
	unsigned long want, room;
	unsigned int limit;

	if (nopen < 0)
		nopen = 256;
	/* two fds a connection at most: its socket, and the file of a static answer */
	want = (unsigned long)nopen + FD_MARGIN + 2UL * MGMT_HTTP_CONN_MAX;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
			rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ? want : rl.rlim_max;
			setrlimit(RLIMIT_NOFILE, &rl);
			getrlimit(RLIMIT_NOFILE, &rl);
		}
		room = rl.rlim_cur == RLIM_INFINITY ? want : (unsigned long)rl.rlim_cur;
	} else {
		room = 1024;
	}
	room = room > (unsigned long)nopen + FD_MARGIN ? (room - (unsigned long)nopen - FD_MARGIN) / 2 : 0;
	limit = room < MGMT_HTTP_CONN_MAX ? (unsigned int)room : MGMT_HTTP_CONN_MAX;
	if (limit < 16)
		limit = 16; /* whatever the fd limit: beyond it accept() fails (EMFILE), libmicrohttpd retries */
	guard.lim.limit = limit;
	guard.lim.high = limit - (limit / 16 > 8 ? limit / 16 : 8);
	guard.lim.share_max = limit * 3 / 4;
	guard.lim.request_s = MGMT_HTTP_REQUEST_S;
	guard.lim.answer_s = MGMT_HTTP_ANSWER_S;
	guard.cap = limit + 16;
	guard.conns = calloc(guard.cap, sizeof(*guard.conns));
	guard.addrs = calloc(guard.cap, sizeof(*guard.addrs));
	guard.live = 0;
	if (guard.conns == NULL || guard.addrs == NULL) {
		free(guard.conns);
		free(guard.addrs);
		guard.conns = NULL;
		guard.addrs = NULL;
		guard.cap = 0;
		snprintf(err, errlen, "out of memory for the connection table");
		return -1;
	}
	return 0;
}

/* After MHD_stop_daemon (every connection CLOSED): free the table. */
static void guard_fini(void)
{
	pthread_mutex_lock(&guard.lock);
	free(guard.conns);
	free(guard.addrs);
	guard.conns = NULL;
	guard.addrs = NULL;
	guard.cap = 0;
	guard.live = 0;
	pthread_mutex_unlock(&guard.lock);
}

/* ------------------------------------------------------------------------------------------ */
/*
 * Deferred answers: one thread per lane (enum mgmt_lane) runs its jobs in order of arrival. A job
 * is queued by this thread right after it suspended the connection (suspend first, then queue:
 * never the other way); the lane runs the work into the job's own answer, then, under
 * defer.lock, moves the answer into the connection's state and resumes it, unless the daemon is
 * gone (mgmt_http_stop waited too long: the answer is dropped). mgmt_http_stop() waits for every
 * job and for the resumed answers to be sent before it stops the daemon.
 */

/** One deferred request. */
struct defer_job {
	struct defer_job *next;
	struct MHD_Connection *conn;
	struct conn_state *st;
	void (*work)(void *arg, struct mgmt_answer *a);
	void *arg;
	struct mgmt_answer answer;
	bool answered;     /**< mgmt_http_stop() answered its connection 503 already: drop the answer */
};

#define DEFER_DRAIN_S 30 /* mgmt_http_stop waits this long at most for the jobs (a change: 20 s) */

/* DEFER_DRAIN_S, or SBX_TEST_DEFER_DRAIN_S (1..60; tests/e2e/55d_http_guard.sh: a job that
 * outlasts the drain without a 30 s wait). */
static unsigned int defer_drain_s(void)
{
	const char *v = getenv("SBX_TEST_DEFER_DRAIN_S");
	long s = v != NULL ? strtol(v, NULL, 10) : 0;

	return s >= 1 && s <= 60 ? (unsigned int)s : DEFER_DRAIN_S;
}

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;                /**< a job queued or finished, an answer sent, stop */
	struct defer_job *head[MGMT_LANES]; /**< queued jobs, oldest first */
	struct defer_job *tail[MGMT_LANES];
	pthread_t tid[MGMT_LANES];
	bool started[MGMT_LANES];
	unsigned int busy;   /**< jobs queued or running, all lanes */
	unsigned int unsent; /**< deferred requests not yet completed (answer not yet sent) */
	struct defer_job *running[MGMT_LANES]; /**< the job each lane runs now, NULL when none */
	bool closing;        /**< mgmt_http_stop() began: a new deferred request is answered 503 */
	bool stop;           /**< the lanes end once their queue is empty */
	bool gone;           /**< the daemon is stopping: resume nothing any more */
} defer = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

static void *lane_thread(void *arg)
{
	unsigned int lane = (unsigned int)(uintptr_t)arg;
	struct defer_job *j;

	pthread_mutex_lock(&defer.lock);
	for (;;) {
		while (defer.head[lane] == NULL && !defer.stop)
			pthread_cond_wait(&defer.cond, &defer.lock);
		j = defer.head[lane];
		if (j == NULL)
			break; /* stopping, queue empty */
		defer.head[lane] = j->next;
		if (defer.head[lane] == NULL)
			defer.tail[lane] = NULL;
		defer.running[lane] = j;
		pthread_mutex_unlock(&defer.lock);
		j->answer = (struct mgmt_answer){ .code = MHD_HTTP_INTERNAL_SERVER_ERROR };
		j->work(j->arg, &j->answer);
		pthread_mutex_lock(&defer.lock);
		defer.running[lane] = NULL;
		if (!defer.gone && !j->answered) {
			j->st->answer = j->answer;
			MHD_resume_connection(j->conn); /* thread-safe (MHD_USE_ITC wakes the HTTP thread) */
		} else {
			cJSON_Delete(j->answer.body);
		}
		defer.busy--;
		pthread_cond_broadcast(&defer.cond);
		free(j);
	}
	pthread_mutex_unlock(&defer.lock);
	return NULL;
}

/* Start the lanes' threads. -1 when one cannot be started (those started are stopped). */
static int lanes_start(char *err, size_t errlen);
static void lanes_stop(void);

static int lanes_start(char *err, size_t errlen)
{
	unsigned int l;

	defer.stop = false;
	defer.gone = false;
	defer.closing = false;
	for (l = MGMT_LANE_INLINE + 1; l < MGMT_LANES; l++) {
		if (pthread_create(&defer.tid[l], NULL, lane_thread, (void *)(uintptr_t)l) != 0) {
			snprintf(err, errlen, "cannot start the HTTP lane threads");
			lanes_stop();
			return -1;
		}
		defer.started[l] = true;
	}
	return 0;
}

/* Stop the lanes' threads once their queues are empty. */
static void lanes_stop(void)
{
	unsigned int l;

	pthread_mutex_lock(&defer.lock);
	defer.stop = true;
	pthread_cond_broadcast(&defer.cond);
	pthread_mutex_unlock(&defer.lock);
	for (l = 0; l < MGMT_LANES; l++) {
		if (defer.started[l])
			pthread_join(defer.tid[l], NULL);
		defer.started[l] = false;
	}
}

/* Wait (defer.lock held) until @p count is 0 or @p s seconds passed. */
static void defer_wait(const unsigned int *count, unsigned int s)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += s;
	while (*count > 0 && pthread_cond_timedwait(&defer.cond, &defer.lock, &until) == 0)
		;
}

void mgmt_defer(struct req *r, enum mgmt_lane lane, void (*work)(void *arg, struct mgmt_answer *a), void *arg)
{
	r->work = work;
	r->work_arg = arg;
	r->work_lane = lane > MGMT_LANE_INLINE && lane < MGMT_LANES ? (unsigned int)lane : MGMT_LANE_CONTROL;
}

static enum MHD_Result reply_unavailable(struct MHD_Connection *c, const char *why);

/* Suspend @p c and queue its job on @p r's lane; once mgmt_http_stop() began, answer 503 instead
 * (the job only frees its argument): a connection suspended then might never be resumed. */
static enum MHD_Result defer_start(struct MHD_Connection *c, struct conn_state *st, const struct req *r)
{
	struct defer_job *j = calloc(1, sizeof(*j));

	if (j == NULL) {
		r->work(r->work_arg, &(struct mgmt_answer){ 0 }); /* frees its argument */
		return reply_unavailable(c, "out of memory");
	}
	*j = (struct defer_job){ .conn = c, .st = st, .work = r->work, .arg = r->work_arg };
	pthread_mutex_lock(&defer.lock);
	if (defer.closing) {
		pthread_mutex_unlock(&defer.lock);
		r->work(r->work_arg, &(struct mgmt_answer){ 0 });
		free(j);
		return reply_unavailable(c, "stopping");
	}
	st->suspended = true;
	st->deferred = true;
	guard_phase(c, PH_SUSPENDED);
	MHD_suspend_connection(c);
	if (defer.tail[r->work_lane] != NULL)
		defer.tail[r->work_lane]->next = j;
	else
		defer.head[r->work_lane] = j;
	defer.tail[r->work_lane] = j;
	defer.busy++;
	defer.unsent++;
	pthread_cond_broadcast(&defer.cond);
	pthread_mutex_unlock(&defer.lock);
	return MHD_YES;
}

/*
 * At a stop (defer.lock held), for every job still queued or running past the drain: its
 * connection is answered 503 now and resumed, so that libmicrohttpd is never stopped with a
 * suspended connection (MHD_stop_daemon() panics then). A queued job is taken off its queue and
 * never runs (a change not applied; the answer says so); a running one finishes on its lane and
 * its answer is dropped (its outcome is unknown to the client: the answer says so).
 * @return the jobs answered so.
 */
static unsigned int defer_abandon(void)
{
	unsigned int l, n = 0;

	for (l = 0; l < MGMT_LANES; l++) {
		struct defer_job *j = defer.running[l], *next;

		if (j != NULL && !j->answered) {
			j->answered = true;
			j->st->answer = (struct mgmt_answer){
				.code = MHD_HTTP_SERVICE_UNAVAILABLE,
				.body = mgmt_error(MHD_HTTP_SERVICE_UNAVAILABLE, NULL,
						   "spanbox-mgmt is stopping and the request did not finish within %u s: "
						   "its outcome is unknown (read the state again once mgmt is back)",
						   defer_drain_s()) };
			MHD_resume_connection(j->conn);
			n++;
		}
		for (j = defer.head[l]; j != NULL; j = next) {
			next = j->next;
			j->st->answer = (struct mgmt_answer){
				.code = MHD_HTTP_SERVICE_UNAVAILABLE,
				.body = mgmt_error(MHD_HTTP_SERVICE_UNAVAILABLE, NULL,
						   "spanbox-mgmt is stopping: the request was not run") };
			MHD_resume_connection(j->conn);
			j->work(j->arg, &(struct mgmt_answer){ 0 }); /* frees its argument */
			free(j);
			defer.busy--;
			n++;
		}
		defer.head[l] = defer.tail[l] = NULL;
	}
	return n;
}

/** A route run on its lane: the handler and a copy of what it may read of the request. */
struct route_job {
	mgmt_route_fn fn;
	struct req r;
	char *body;
	char *method, *url, *client, *who, *ctype;
};

static void route_job_free(struct route_job *j)
{
	free(j->body);
	free(j->method);
	free(j->url);
	free(j->client);
	free(j->who);
	free(j->ctype);
	free(j);
}

static void route_work(void *arg, struct mgmt_answer *a)
{
	struct route_job *j = arg;

	if (a->code != 0) { /* 0: out of memory, only free */
		a->body = NULL;
		a->code = j->fn(&j->r, &a->body);
		snprintf(a->retry_after, sizeof(a->retry_after), "%s", j->r.retry_after);
	}
	route_job_free(j);
}

/* Defer route @p fn of @p r to its lane: the copy of the request it runs on. */
static bool defer_route(struct req *r, mgmt_route_fn fn, unsigned int lane)
{
	struct route_job *j = calloc(1, sizeof(*j));

	if (j == NULL)
		return false;
	j->fn = fn;
	j->body = malloc(r->body_len + 1);
	j->method = strdup(r->method);
	j->url = strdup(r->url);
	j->client = strdup(r->client);
	j->who = strdup(r->who);
	j->ctype = r->content_type_in ? strdup(r->content_type_in) : NULL;
	if (j->body == NULL || j->method == NULL || j->url == NULL || j->client == NULL || j->who == NULL ||
	    (r->content_type_in != NULL && j->ctype == NULL)) {
		route_job_free(j);
		return false;
	}
	memcpy(j->body, r->body, r->body_len);
	j->body[r->body_len] = '\0';
	j->r = *r;
	j->r.conn = NULL;
	j->r.body = j->body;
	j->r.method = j->method;
	j->r.url = j->url;
	j->r.client = j->client;
	j->r.who = j->who;
	j->r.content_type_in = j->ctype;
	j->r.work = NULL;
	j->r.lane = lane;
	j->r.rerun_lane = MGMT_LANE_INLINE;
	j->r.retry_after[0] = '\0';
	mgmt_defer(r, (enum mgmt_lane)lane, route_work, j);
	return true;
}

bool mgmt_run_on(struct req *r, enum mgmt_lane lane)
{
	if (r->lane == (unsigned int)lane || lane <= MGMT_LANE_INLINE || lane >= MGMT_LANES)
		return false;
	r->rerun_lane = lane;
	return true;
}

/* ------------------------------------------------------------------------------------------ */

/* every route table, searched in this order */
static const struct mgmt_route *const tables[] = {
	mgmt_routes_core, mgmt_routes_tables, mgmt_routes_history, mgmt_routes_metrics, mgmt_routes_ports,
	mgmt_routes_captures, mgmt_routes_flows,
	mgmt_routes_maps,
	mgmt_routes_flows_config,
};

void mgmt_http_print_routes(FILE *f)
{
	size_t t, i;

	for (t = 0; t < sizeof(tables) / sizeof(tables[0]); t++)
		for (i = 0; tables[t][i].method != NULL; i++)
			fprintf(f, "%s %s\n", tables[t][i].method, tables[t][i].path);
	/* what no route matches: GET/HEAD of a path outside /api and /metrics (handle(), step 4) */
	fprintf(f, "GET /\nGET /{file}\n");
}

cJSON *mgmt_error(unsigned int code, const char *field, const char *fmt, ...)
{
	cJSON *o = cJSON_CreateObject(), *e = cJSON_AddObjectToObject(o, "error");
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	cJSON_AddNumberToObject(e, "code", code);
	cJSON_AddStringToObject(e, "message", msg);
	if (field != NULL)
		cJSON_AddStringToObject(e, "field", field);
	return o;
}

const struct sbx_shm *mgmt_live_shm(const struct mgmt_ctx *ctx, char *why, size_t len)
{
	/* read once: main sets it to NULL when the primary goes (mgmt/main.c) */
	const struct sbx_shm *shm = __atomic_load_n(&ctx->shm, __ATOMIC_ACQUIRE);

	if (shm == NULL) {
		snprintf(why, len, "%s", ctx->down_reason);
		return NULL;
	}
	return mgmt_primary_alive(shm, why, len) ? shm : NULL;
}

const struct sbx_shm *mgmt_need_shm(struct req *r, cJSON **body, unsigned int *code)
{
	char why[256];
	const struct sbx_shm *shm = mgmt_live_shm(r->ctx, why, sizeof(why));

	if (shm == NULL) {
		*body = mgmt_error(MHD_HTTP_SERVICE_UNAVAILABLE, NULL, "appliance down: %s", why);
		*code = MHD_HTTP_SERVICE_UNAVAILABLE;
	}
	return shm;
}

long mgmt_decimal_param(const char *s, size_t max_digits)
{
	size_t n = strlen(s), i;

	if (n == 0 || n > max_digits || (s[0] == '0' && n > 1))
		return -1;
	for (i = 0; i < n; i++)
		if (!isdigit((unsigned char)s[i]))
			return -1;
	return strtol(s, NULL, 10);
}

cJSON *mgmt_parse_body(struct req *r, cJSON **body, unsigned int *code)
{
	const char *ct = r->content_type_in;
	struct mgmt_verdict v;
	cJSON *doc;
	size_t n;

	/* "application/json", optionally followed by parameters ("; charset=utf-8") */
	n = strlen("application/json");
	if (ct == NULL || strncasecmp(ct, "application/json", n) != 0 || (ct[n] != '\0' && ct[n] != ';' && ct[n] != ' ')) {
		*body = mgmt_error(MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, NULL,
				   "Content-Type must be application/json (got %s)", ct ? ct : "none");
		*code = MHD_HTTP_UNSUPPORTED_MEDIA_TYPE;
		return NULL;
	}
	doc = mgmt_body_json(r->body, r->body_len, &v);
	if (doc == NULL) {
		*body = mgmt_error(v.code, v.field, "%s", v.msg);
		*code = v.code;
	}
	return doc;
}

/* Match @p url against a route template, collecting "{x}" segments. */
static bool match(const char *tmpl, const char *url, struct req *r)
{
	r->nparams = 0;
	while (*tmpl && *url) {
		if (*tmpl == '{') {
			size_t n = strcspn(url, "/");

			if (n == 0 || n >= sizeof(r->params[0]) || r->nparams == 2)
				return false;
			memcpy(r->params[r->nparams], url, n);
			r->params[r->nparams++][n] = '\0';
			url += n;
			tmpl = strchr(tmpl, '}') + 1;
			continue;
		}
		if (*tmpl++ != *url++)
			return false;
	}
	return *tmpl == '\0' && *url == '\0';
}

/*
 * Send @p body (consumed) with status @p code. A JSON body is printed; with @p ctype set, @p body
 * is a cJSON string sent as is with that Content-Type (Prometheus text, say).
 */
static enum MHD_Result reply(struct MHD_Connection *c, unsigned int code, cJSON *body, const char *ctype,
			     const char *hname, const char *hvalue)
{
	static const char oom[] = "{\"error\":{\"code\":500,\"message\":\"out of memory\"}}";
	char *text = NULL;
	struct MHD_Response *r;
	enum MHD_Result ret;

	if (ctype != NULL && cJSON_IsString(body))
		text = strdup(cJSON_GetStringValue(body));
	else if (body != NULL)
		text = cJSON_PrintUnformatted(body);
	if (ctype == NULL || !cJSON_IsString(body))
		ctype = "application/json";
	cJSON_Delete(body);
	if (text != NULL) {
		r = MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
	} else {
		code = MHD_HTTP_INTERNAL_SERVER_ERROR;
		ctype = "application/json";
		r = MHD_create_response_from_buffer(strlen(oom), (void *)oom, MHD_RESPMEM_PERSISTENT);
	}
	if (r == NULL) {
		free(text);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	if (hname != NULL && hvalue != NULL && hvalue[0])
		MHD_add_response_header(r, hname, hvalue);
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ret;
}

/*
 * Answer 503 with a static JSON body that names @p why (a short constant string): what a request
 * gets when mgmt cannot make its answer (out of memory) or will not run it (stopping). Needs no
 * allocation but libmicrohttpd's response object; MHD_NO (the connection closed without an
 * answer) only when even that fails.
 */
static enum MHD_Result reply_unavailable(struct MHD_Connection *c, const char *why)
{
	static const char oom[] = "{\"error\":{\"code\":503,\"message\":\"out of memory: try again\"}}";
	static const char stopping[] = "{\"error\":{\"code\":503,\"message\":\"spanbox-mgmt is stopping: "
				       "the request was not run\"}}";
	const char *text = strcmp(why, "stopping") == 0 ? stopping : oom;
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ret;

	if (r == NULL)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, "1");
	ret = MHD_queue_response(c, MHD_HTTP_SERVICE_UNAVAILABLE, r);
	MHD_destroy_response(r);
	return ret;
}

/* Answer 200 with the file a handler opened (req.file_set: a capture's download); closes it. */
static enum MHD_Result reply_file(struct MHD_Connection *c, const struct req *rq)
{
	struct MHD_Response *r = MHD_create_response_from_fd64(rq->file_size, rq->file_fd); /* owns the fd */
	char disp[128];
	enum MHD_Result ret;

	if (r == NULL) {
		close(rq->file_fd);
		return reply(c, MHD_HTTP_INTERNAL_SERVER_ERROR,
			     mgmt_error(MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "out of memory"), NULL, NULL, NULL);
	}
	snprintf(disp, sizeof(disp), "attachment; filename=\"%s\"", rq->file_name);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/octet-stream");
	MHD_add_response_header(r, "Content-Disposition", disp);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

/*
 * URL and query unescaping (MHD_OPTION_UNESCAPE_CALLBACK): %XX decoded in place, except %00 and
 * %2F, which stay as the three characters: a decoded NUL would cut "p0-p1%00x" to "p0-p1" and
 * address an object the client did not name, and a decoded "/" would add path segments the
 * client escaped ("/captures/1%2ffiles%2f1" reached the file route). A path that holds either
 * names nothing (404). @return the new length.
 */
static size_t unescape(void *cls, struct MHD_Connection *c, char *s)
{
	char *w = s;
	const char *r = s;

	(void)cls;
	(void)c;
	while (*r) {
		if (r[0] == '%' && isxdigit((unsigned char)r[1]) && isxdigit((unsigned char)r[2]) &&
		    !(r[1] == '0' && r[2] == '0') && !(r[1] == '2' && (r[2] == 'f' || r[2] == 'F'))) {
			char hex[3] = { r[1], r[2], '\0' };

			*w++ = (char)strtol(hex, NULL, 16);
			r += 3;
		} else {
			*w++ = *r++;
		}
	}
	*w = '\0';
	return (size_t)(w - s);
}

/* "addr:port" of the client of @p c. */
static void client_addr(struct MHD_Connection *c, char *buf, size_t len)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	char ip[INET6_ADDRSTRLEN] = "?";
	unsigned int port = 0;

	if (ci != NULL && ci->client_addr != NULL) {
		if (ci->client_addr->sa_family == AF_INET) {
			const struct sockaddr_in *a = (const struct sockaddr_in *)ci->client_addr;

			inet_ntop(AF_INET, &a->sin_addr, ip, sizeof(ip));
			port = ntohs(a->sin_port);
		} else if (ci->client_addr->sa_family == AF_INET6) {
			const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)ci->client_addr;

			inet_ntop(AF_INET6, &a->sin6_addr, ip, sizeof(ip));
			port = ntohs(a->sin6_port);
		}
	}
	snprintf(buf, len, "%s:%u", ip, port);
}

/* Keep @p n more bytes of body; false (and too_big) past st->max_body or when out of memory. */
static bool body_append(struct conn_state *st, const char *data, size_t n)
{
	if (st->too_big || st->len + n > st->max_body) {
		st->too_big = true;
		return false;
	}
	if (st->len + n + 1 > st->cap) {
		size_t cap = st->cap ? st->cap : 1024;
		char *p;

		while (cap < st->len + n + 1)
			cap *= 2;
		p = realloc(st->body, cap);
		if (p == NULL) {
			st->too_big = true;
			return false;
		}
		st->body = p;
		st->cap = cap;
	}
	memcpy(st->body + st->len, data, n);
	st->len += n;
	st->body[st->len] = '\0';
	return true;
}

/* Whether @p url belongs to the API (never served from static files): /api, /api/..., /metrics... */
static bool api_path(const char *url)
{
	return strcmp(url, "/api") == 0 || strncmp(url, "/api/", 5) == 0 || strcmp(url, "/metrics") == 0 ||
	       strncmp(url, "/metrics/", 9) == 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Roles (auth.h): who may do what, and the slowed answers of a client that guesses tokens. */

#define WWW_AUTH "Bearer realm=\"spanbox\""
#define WWW_AUTH_BAD "Bearer realm=\"spanbox\", error=\"invalid_token\""

/* The 401 of a request without a token of the role it needs. */
static cJSON *denied_body(const char *method, const char *url, bool bad_token)
{
	return mgmt_error(MHD_HTTP_UNAUTHORIZED, NULL, "%s %s needs the header 'Authorization: Bearer <token>'%s",
			  method, url, bad_token ? ": the token sent is not the right one" : "");
}

/** A slowed 401 (MGMT_LANE_SLOW): answered at @c due_ns. */
struct slow_job {
	uint64_t due_ns; /**< sbx_now_ns() clock */
	char *method, *url;
};

static void slow_work(void *arg, struct mgmt_answer *a)
{
	struct slow_job *j = arg;

	if (a->code != 0) { /* 0: out of memory, only free */
		uint64_t now = sbx_now_ns();

		if (j->due_ns > now) /* jobs arrive in due order: each waits at most MGMT_AUTH_SLOW_MS */
			nanosleep(&(struct timespec){ (time_t)((j->due_ns - now) / 1000000000ULL),
						      (long)((j->due_ns - now) % 1000000000ULL) }, NULL);
		a->code = MHD_HTTP_UNAUTHORIZED;
		a->body = denied_body(j->method, j->url, true);
		a->www_authenticate = WWW_AUTH_BAD;
	}
	free(j->method);
	free(j->url);
	free(j);
}

/* Decide, at the request's first call, what its token lets it do (struct conn_state). */
static void authorize(struct MHD_Connection *c, const struct mgmt_ctx *ctx, const char *method,
		      const char *url, struct conn_state *st)
{
	const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
	bool write = mgmt_auth_needed(method);
	/* the web page's own files are public (a browser's navigation sends no bearer token): the
	 * page then reads the API with the token typed into it */
	bool open_read = !write && (ctx->reads_open || !api_path(url));

	st->role = mgmt_auth_role(auth, ctx->token, ctx->viewer_token);
	if (st->role == MGMT_ROLE_NONE && !open_read) {
		st->denied = true;
		st->bad_token = auth != NULL;
	} else if (st->role == MGMT_ROLE_VIEWER && write) {
		st->forbidden = true;
	}
	if (st->bad_token) {
		const union MHD_ConnectionInfo *ai = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
		unsigned char key[17];
		bool first = false;

		guard_key(ai != NULL ? ai->client_addr : NULL, key);
		st->slow = mgmt_auth_fail(key, sizeof(key), sbx_now_ns(), &first);
		if (first) { /* once per address and window; never the token */
			char who[INET6_ADDRSTRLEN + 8], *port;

			client_addr(c, who, sizeof(who));
			port = strrchr(who, ':'); /* "addr:port": the address only, as counted */
			if (port != NULL)
				*port = '\0';
			fprintf(stderr, "spanbox-mgmt: auth: more than %d wrong tokens from %s within %d s: its 401 "
				"answers wait %d ms from now on (until the window ends)\n", MGMT_AUTH_FAIL_MAX, who,
				MGMT_AUTH_FAIL_WINDOW_S, MGMT_AUTH_SLOW_MS);
		}
	}
}

/* Answer @p st's 401 after MGMT_AUTH_SLOW_MS on MGMT_LANE_SLOW (the connection suspended). */
static enum MHD_Result slow_denial(struct MHD_Connection *c, struct conn_state *st, const char *method,
				   const char *url)
{
	struct slow_job *j = calloc(1, sizeof(*j));
	struct req r = { .conn = c };

	if (j == NULL || (j->method = strdup(method)) == NULL || (j->url = strdup(url)) == NULL) {
		if (j != NULL)
			free(j->method);
		free(j);
		return reply_unavailable(c, "out of memory");
	}
	j->due_ns = sbx_now_ns() + MGMT_AUTH_SLOW_MS * 1000000ULL;
	mgmt_defer(&r, MGMT_LANE_SLOW, slow_work, j);
	return defer_start(c, st, &r);
}

/* MHD_get_connection_values() iterator: add a field's length (name, value, 4 for ": " or "=&"
 * and CRLF) to the size_t at @p cls. */
static enum MHD_Result add_field_len(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	(void)kind;
	*(size_t *)cls += strlen(key) + (value != NULL ? strlen(value) : 0) + 4;
	return MHD_YES;
}

/* 414 / 431 in the API's JSON when the URL or the header fields are longer than MAX_URL /
 * MAX_HEADERS; MHD_YES with *answered false when neither is. */
static enum MHD_Result check_request_size(struct MHD_Connection *c, const char *url, bool *answered)
{
	size_t ulen = strlen(url), hlen = 0;

	*answered = false;
	MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, add_field_len, &ulen);
	if (ulen > MAX_URL) {
		*answered = true;
		return reply(c, MHD_HTTP_URI_TOO_LONG,
			     mgmt_error(MHD_HTTP_URI_TOO_LONG, NULL, "request URL longer than %d bytes", MAX_URL),
			     NULL, NULL, NULL);
	}
	MHD_get_connection_values(c, MHD_HEADER_KIND, add_field_len, &hlen);
	if (hlen > MAX_HEADERS) {
		*answered = true;
		return reply(c, MHD_HTTP_REQUEST_HEADER_FIELDS_TOO_LARGE,
			     mgmt_error(MHD_HTTP_REQUEST_HEADER_FIELDS_TOO_LARGE, NULL,
					"request header fields longer than %d bytes", MAX_HEADERS),
			     NULL, NULL, NULL);
	}
	return MHD_YES;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload_data,
			      size_t *upload_data_size, void **con_cls)
{
	const struct mgmt_ctx *ctx = cls;
	const char *m = strcmp(method, "HEAD") == 0 ? "GET" : method;
	struct conn_state *st = *con_cls;
	char allow[64] = "", client[INET6_ADDRSTRLEN + 8], who[INET6_ADDRSTRLEN + 20];
	size_t t, i;

	(void)version;
	/* Answer once the whole request is read: replying from the first call would make MHD close
	 * the connection instead of keeping it alive. The body is kept (up to MAX_BODY bytes). */
	if (st == NULL) {
		bool answered;
		enum MHD_Result ret = check_request_size(c, url, &answered);

		if (answered)
			return ret;
		st = calloc(1, sizeof(*st));
		if (st == NULL)
			return reply_unavailable(c, "out of memory");
		*con_cls = st;
		st->max_body = strncmp(url, MAPS_PREFIX, strlen(MAPS_PREFIX)) == 0 &&
				       (url[strlen(MAPS_PREFIX)] == '\0' || url[strlen(MAPS_PREFIX)] == '/')
			       ? MAPS_MAX_BODY : MAX_BODY;
		authorize(c, ctx, method, url, st);
		return MHD_YES;
	}
	if (*upload_data_size != 0) {
		if (!st->denied && !st->forbidden) /* an unauthorized body is read (to keep the connection) and dropped */
			body_append(st, upload_data, *upload_data_size);
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (st->suspended) { /* resumed by its lane, with the answer */
		struct mgmt_answer a;

		pthread_mutex_lock(&defer.lock);
		if (st->answer.code == 0) {
			/* called before its lane answered (the lane sets a code before it resumes): an
			 * answer with no status would make libmicrohttpd close the connection without a
			 * word ("Empty reply from server"). Suspend it again; the lane's resume, which
			 * waits for defer.lock, comes after. */
			__atomic_fetch_add(&early_calls, 1, __ATOMIC_RELAXED);
			MHD_suspend_connection(c);
			pthread_mutex_unlock(&defer.lock);
			return MHD_YES;
		}
		a = st->answer;
		st->answer.body = NULL;
		pthread_mutex_unlock(&defer.lock);
		st->suspended = false;
		guard_phase(c, PH_ANSWERING); /* its answer is here: from now it must be sent in time */
		if (a.www_authenticate != NULL)
			return reply(c, a.code, a.body, NULL, MHD_HTTP_HEADER_WWW_AUTHENTICATE, a.www_authenticate);
		return reply(c, a.code, a.body, NULL, MHD_HTTP_HEADER_RETRY_AFTER, a.retry_after);
	}
	guard_phase(c, PH_ANSWERING); /* the request is complete: every path below answers it */
	if (st->denied && st->slow)
		return slow_denial(c, st, method, url);
	if (st->denied)
		return reply(c, MHD_HTTP_UNAUTHORIZED, denied_body(method, url, st->bad_token), NULL,
			     MHD_HTTP_HEADER_WWW_AUTHENTICATE, st->bad_token ? WWW_AUTH_BAD : WWW_AUTH);
	if (st->forbidden)
		return reply(c, MHD_HTTP_FORBIDDEN,
			     mgmt_error(MHD_HTTP_FORBIDDEN, NULL, "%s %s needs the admin role: the token sent is the viewer's",
					method, url),
			     NULL, NULL, NULL);
	if (st->too_big)
		return reply(c, MHD_HTTP_CONTENT_TOO_LARGE,
			     mgmt_error(MHD_HTTP_CONTENT_TOO_LARGE, NULL, "request body longer than %zu bytes", st->max_body),
			     NULL, NULL, NULL);
	if (strcasestr(url, "%2f") != NULL || strstr(url, "%00") != NULL) /* left escaped (unescape()) */
		return reply(c, MHD_HTTP_NOT_FOUND,
			     mgmt_error(MHD_HTTP_NOT_FOUND, NULL, "no route %s %s: an escaped '/' or NUL names nothing",
					method, url),
			     NULL, NULL, NULL);
	client_addr(c, client, sizeof(client));
	snprintf(who, sizeof(who), "%s (%s)", client, mgmt_role_name(st->role));
	for (t = 0; t < sizeof(tables) / sizeof(tables[0]); t++) {
		for (i = 0; tables[t][i].method != NULL; i++) {
			const struct mgmt_route *rt = &tables[t][i];
			struct req r = { .ctx = ctx, .conn = c, .method = m, .url = url,
					 .body = st->body ? st->body : "", .body_len = st->len, .client = client, .who = who,
					 .content_type_in = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
											MHD_HTTP_HEADER_CONTENT_TYPE) };

			if (!match(rt->path, url, &r))
				continue;
			if (strcmp(rt->method, m) == 0) {
				cJSON *body = NULL;
				unsigned int code;

				code = rt->fn(&r, &body);
				if (r.rerun_lane != MGMT_LANE_INLINE) {
					cJSON_Delete(body);
					if (!defer_route(&r, rt->fn, r.rerun_lane))
						return reply(c, MHD_HTTP_INTERNAL_SERVER_ERROR,
							     mgmt_error(MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "out of memory"),
							     NULL, NULL, NULL);
					return defer_start(c, st, &r);
				}
				if (r.work != NULL) {
					cJSON_Delete(body);
					return defer_start(c, st, &r);
				}
				if (r.file_set) {
					cJSON_Delete(body);
					return reply_file(c, &r);
				}
				return reply(c, code, body, r.content_type, MHD_HTTP_HEADER_RETRY_AFTER, r.retry_after);
			}
			snprintf(allow + strlen(allow), sizeof(allow) - strlen(allow), "%s%s",
				 allow[0] ? ", " : "", rt->method);
			if (strcmp(rt->method, "GET") == 0)
				snprintf(allow + strlen(allow), sizeof(allow) - strlen(allow), ", HEAD");
		}
	}
	if (allow[0])
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED,
			     mgmt_error(MHD_HTTP_METHOD_NOT_ALLOWED, NULL, "method %s not allowed on %s", method, url),
			     NULL, MHD_HTTP_HEADER_ALLOW, allow);
	if (strcmp(m, "GET") == 0 && !api_path(url)) {
		struct MHD_Response *f = mgmt_static_response(ctx->web_root ? ctx->web_root : "", url);

		if (f != NULL) {
			enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_OK, f);

			MHD_destroy_response(f);
			return ret;
		}
		return reply(c, MHD_HTTP_NOT_FOUND, mgmt_error(MHD_HTTP_NOT_FOUND, NULL, "no file %s", url),
			     NULL, NULL, NULL);
	}
	return reply(c, MHD_HTTP_NOT_FOUND, mgmt_error(MHD_HTTP_NOT_FOUND, NULL, "no route %s %s", method, url),
		     NULL, NULL, NULL);
}

/* The request is over (answered, or the client went away): free its state; the connection
 * waits for its next request from now (keep-alive). */
static void completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe)
{
	struct conn_state *st = *con_cls;

	(void)cls;
	(void)toe;
	guard_phase(c, PH_WAITING);
	if (st != NULL && st->deferred) {
		pthread_mutex_lock(&defer.lock);
		cJSON_Delete(st->answer.body); /* an answer never sent */
		st->answer.body = NULL;
		defer.unsent--;
		pthread_cond_broadcast(&defer.cond);
		pthread_mutex_unlock(&defer.lock);
	}
	if (st != NULL)
		free(st->body);
	free(*con_cls);
	*con_cls = NULL;
}

struct MHD_Daemon *mgmt_http_start(int listen_fd, const struct mgmt_ctx *ctx, char *err,
				   size_t errlen)
{
	/* See the top of the file for why one internal polling thread. ITC: MHD_quiesce_daemon. */
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC | MHD_USE_ERROR_LOG |
			     MHD_ALLOW_SUSPEND_RESUME;
	struct MHD_Daemon *d;

	/* epoll (poll without it): select() would cap the fds at FD_SETSIZE (1024) */
	flags |= MHD_is_feature_supported(MHD_FEATURE_EPOLL) == MHD_YES ? MHD_USE_EPOLL
									  : MHD_USE_POLL;
	if (guard_init(err, errlen) < 0)
		return NULL;
	if (lanes_start(err, errlen) < 0) {
		guard_fini();
		return NULL;
	}
	if (ctx->tls_cert != NULL)
		flags |= MHD_USE_TLS;
	/* libmicrohttpd's idle timeout stays as a backstop; the guard's deadlines are stricter. Without
	 * TLS the HTTPS options are MHD_OPTION_END: the list ends there. */
	d = MHD_start_daemon(flags, 0, NULL, NULL, handle, (void *)ctx,
			     MHD_OPTION_LISTEN_SOCKET, (MHD_socket)listen_fd,
			     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)MGMT_HTTP_REQUEST_S,
			     MHD_OPTION_CONNECTION_LIMIT, guard.lim.limit,
			     MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONN_MEMORY,
			     MHD_OPTION_NOTIFY_COMPLETED, completed, NULL,
			     MHD_OPTION_NOTIFY_CONNECTION, on_connection, NULL,
			     MHD_OPTION_UNESCAPE_CALLBACK, unescape, NULL,
			     ctx->tls_cert != NULL ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, ctx->tls_cert,
			     MHD_OPTION_HTTPS_MEM_KEY, ctx->tls_key,
			     MHD_OPTION_HTTPS_PRIORITIES, MGMT_TLS_PRIORITIES,
			     MHD_OPTION_END);
	if (d == NULL) {
		lanes_stop();
		guard_fini();
		snprintf(err, errlen, "MHD_start_daemon failed%s",
			 ctx->tls_cert != NULL && MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES
				 ? ": this libmicrohttpd has no TLS (mgmt.tls)" : "");
	}
	return d;
}

int mgmt_http_stop(struct MHD_Daemon *d)
{
	MHD_socket fd;

	unsigned int left;

	/* every deferred request is answered first: its jobs end (bounded: each waits for a deadline
	 * of its own), then the answers go out; what outlasts the drain is answered 503 (a suspended
	 * connection left at MHD_stop_daemon() is a panic of libmicrohttpd) */
	pthread_mutex_lock(&defer.lock);
	defer.closing = true;
	defer_wait(&defer.busy, defer_drain_s());
	left = defer_abandon();
	if (left > 0)
		fprintf(stderr, "spanbox-mgmt: http: stopping: %u request(s) still waiting for a lane after %u s "
			"answered 503\n", left, defer_drain_s());
	defer_wait(&defer.unsent, 2);
	defer.gone = true; /* from now on no lane resumes a connection of this daemon */
	pthread_mutex_unlock(&defer.lock);
	fd = MHD_quiesce_daemon(d);

	MHD_stop_daemon(d); /* every connection closed and forgotten (NOTIFY_CONNECTION CLOSED) */
	lanes_stop();
	guard_fini();
	return fd == MHD_INVALID_SOCKET ? -1 : (int)fd;
}
