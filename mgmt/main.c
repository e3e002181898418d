/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spanbox-mgmt: REST API and SQLite store of the appliance, a read-only DPDK secondary.
 * Usage: spanbox-mgmt -c CONFIG.json [--listen ADDR] [--port N] [--db PATH] [--print-token]
 *        spanbox-mgmt --routes
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>

#include "spanbox/config.h"
#include "spanbox/eal_args.h"
#include "spanbox/ipc.h"
#include "spanbox/lcore_lock.h"
#include "attach.h"
#include "auth.h"
#include "db.h"
#include "history.h"
#include "store.h"
#include "system.h"
#include "http.h"
#include "static.h"
#include "tls.h"
#include "watch.h"

#define PROG "spanbox-mgmt"
/* connections the kernel queues for accept(): a burst of new connections (a flood, or every
 * client reconnecting) waits there instead of having SYNs dropped (capped by net.core.somaxconn) */
#define LISTEN_BACKLOG 4096

static volatile sig_atomic_t g_stop;
/* --print-token: print the effective admin token and exit; --print-token-source: print where
 * it comes from ("config", or the path of the token file mgmt reads) and exit */
static enum { PRINT_NONE, PRINT_TOKEN, PRINT_TOKEN_SOURCE } g_print_token;

static void on_signal(int sig)
{
	(void)sig;
	g_stop = 1;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: " PROG " -c CONFIG.json [--listen ADDR] [--port N] [--db PATH] [--print-token]\n"
		   "       " PROG " -c CONFIG.json --print-token-source\n"
		   "       " PROG " --routes   (print every route as \"METHOD PATH\" and exit)\n");
}

/* Command line into @p cfg (after loading the config it names). @return 0, or an exit code. */
static int parse_args(int argc, char **argv, struct sbx_config *cfg)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' }, { "listen", required_argument, NULL, 'l' },
		{ "port", required_argument, NULL, 'p' },   { "db", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },         { "print-token", no_argument, NULL, 't' },
		{ "routes", no_argument, NULL, 'r' },       { "print-token-source", no_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	const char *config = NULL, *listen_addr = NULL, *db = NULL;
	long port = -1;
	bool routes = false;
	char err[512], *end;
	int opt;

	while ((opt = getopt_long(argc, argv, "c:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'c': config = optarg; break;
		case 'l': listen_addr = optarg; break;
		case 'd': db = optarg; break;
		case 'p':
			port = strtol(optarg, &end, 10);
			if (*end != '\0' || port < 1 || port > 65535) {
				fprintf(stderr, PROG ": --port: expected 1..65535, got '%s'\n", optarg);
				return 2;
			}
			break;
		case 't': g_print_token = PRINT_TOKEN; break;
		case 's': g_print_token = PRINT_TOKEN_SOURCE; break;
		case 'r': routes = true; break;
		case 'h': usage(stdout); return -1;
		default: usage(stderr); return 2;
		}
	}
	if (routes && optind == argc) { /* the route tables only: no config, EAL or database */
		mgmt_http_print_routes(stdout);
		return fflush(stdout) == 0 ? -1 : 1;
	}
	if (config == NULL || optind != argc) {
		usage(stderr);
		return 2;
	}
	if (sbx_config_load(config, cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, PROG ": %s\n", err);
		return 2;
	}
	/* before any thread: EAL's and ours then stay off the pinned workers' CPUs */
	if (sbx_eal_housekeeping_affinity(cfg, err, sizeof(err)) != 0)
		fprintf(stderr, PROG ": %s: its threads may share the workers' CPUs\n", err);
	if ((listen_addr && strlen(listen_addr) >= sizeof(cfg->mgmt_listen)) ||
	    (db && strlen(db) >= sizeof(cfg->mgmt_database))) {
		fprintf(stderr, PROG ": --%s: too long\n", db && strlen(db) >= sizeof(cfg->mgmt_database) ? "db" : "listen");
		return 2;
	}
	if (listen_addr)
		snprintf(cfg->mgmt_listen, sizeof(cfg->mgmt_listen), "%s", listen_addr);
	if (db) {
		/* the default token file follows the database (config.c derived it from the config's) */
		char dflt[sizeof(cfg->mgmt_token_file)];

		snprintf(dflt, sizeof(dflt), "%s.token", cfg->mgmt_database);
		if (strcmp(dflt, cfg->mgmt_token_file) == 0 &&
		    snprintf(cfg->mgmt_token_file, sizeof(cfg->mgmt_token_file), "%s.token", db) >=
			    (int)sizeof(cfg->mgmt_token_file)) {
			fprintf(stderr, PROG ": --db: too long to derive the token file from it\n");
			return 2;
		}
		snprintf(cfg->mgmt_database, sizeof(cfg->mgmt_database), "%s", db);
	}
	if (port > 0)
		cfg->mgmt_port = (uint16_t)port;
	return 0;
}

/* A listening TCP socket on @p addr (IPv4 or IPv6 literal, "[v6]" accepted) port @p port;
 * -2 for a bad address, -1 when it cannot listen. */
static int open_listen(const char *addr, uint16_t port)
{
	struct sockaddr_in6 s6 = { .sin6_family = AF_INET6, .sin6_port = htons(port) };
	struct sockaddr_in s4 = { .sin_family = AF_INET, .sin_port = htons(port) };
	char a[64];
	size_t n = strlen(addr);
	int fd, one = 1, af;

	if (n >= 2 && addr[0] == '[' && addr[n - 1] == ']')
		snprintf(a, sizeof(a), "%.*s", (int)(n - 2), addr + 1);
	else
		snprintf(a, sizeof(a), "%s", addr);
	if (inet_pton(AF_INET, a, &s4.sin_addr) == 1) {
		af = AF_INET;
	} else if (inet_pton(AF_INET6, a, &s6.sin6_addr) == 1) {
		af = AF_INET6;
	} else {
		fprintf(stderr, PROG ": listen address '%s' is not an IPv4 or IPv6 literal\n", addr);
		return -2;
	}
	fd = socket(af, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    (af == AF_INET ? bind(fd, (struct sockaddr *)&s4, sizeof(s4))
			   : bind(fd, (struct sockaddr *)&s6, sizeof(s6))) < 0 ||
	    listen(fd, LISTEN_BACKLOG) < 0) {
		fprintf(stderr, PROG ": cannot listen on %s port %u: %s\n", addr, port, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/*
 * What the steps of main share (DPDK's mp_server splits its main the same way): what mgmt_init()
 * sets up, mgmt_run() watches, mgmt_stop() and mgmt_fini() take down. One, static, in main().
 */
struct mgmt_run {
	struct sbx_config cfg;
	struct mgmt_db db;
	struct mgmt_history history; /* the stats history (history.h): sampled by mgmt_run() */
	struct mgmt_ctx ctx;         /* what the handlers read (http.h) */
	int changes_in_flight;       /* ctx.changes_in_flight points here (api_tables.c counts) */
	struct MHD_Daemon *httpd;    /* NULL until mgmt_serve() started it */
	char **exec_argv;            /* argv in its original order (getopt permutes argv), for mgmt_reexec() */
	sigset_t sigs;               /* SIGINT and SIGTERM */
	sigset_t unblocked;          /* the signal mask to serve with (sigs not blocked) */
	char reason[256];            /* why the appliance is down (ctx.down_reason) */
	char token[MGMT_TOKEN_MAX + 1];
	char viewer_token[MGMT_TOKEN_MAX + 1]; /* "" = no viewer role */
	struct mgmt_tls tls;         /* mgmt.tls read and checked (cert NULL: plain HTTP) */
	char web_root[4096];         /* "" = no static files */
	char web_err[512];           /* why there are none */
	bool token_created;          /* the token file was generated now */
	bool viewer_created;         /* the viewer token file was generated now */
	bool eal_up;                 /* rte_eal_init() succeeded: rte_eal_cleanup() before exit or exec */
	bool fresh;                  /* first image (not re-executed): announces itself */
	bool lost;                   /* mgmt_run(): the primary went away (re-attach) */
	bool retry;                  /* mgmt_run(): the appliance is still down after MGMT_RETRY_S (re-attach) */
	int lfd;                     /* listening socket, kept across mgmt_reexec() */
	int lock_fd;                 /* mgmt's lcore lock, kept across mgmt_reexec() */
};

/* The main loop's period, ms (shm.h's SBX_MGMT_DETACH_MS and http.h's sweep count on it). */
#define MGMT_TICK_MS 100
/* ms past SBX_TABLES_APPLY_TIMEOUT_MS a change in flight has to be answered at shutdown */
#define CHANGE_DRAIN_SLACK_MS 1000
#define CHANGE_DRAIN_POLL_MS 10
/* ms MHD has, after the primary was lost, to send the answer of a change that finished */
#define ANSWER_FLUSH_MS 50
/* ms of SBX_MGMT_DETACH_MS mgmt does not count on: it notices a lost primary up to one tick after
 * the primary began to wait, and the primary checks mgmt_pid between naps */
#define DETACH_MARGIN_MS (2 * MGMT_TICK_MS)

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Keep argv's order for re-executing and take SIGINT/SIGTERM; blocks them (r->unblocked to
 * restore) while threads are created (EAL, MHD) so that only the main thread takes them.
 * @return 0, or 1 when out of memory. */
static int mgmt_setup(struct mgmt_run *r, int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	int i;

	r->exec_argv = calloc((size_t)argc + 1, sizeof(*r->exec_argv));
	if (r->exec_argv == NULL)
		return 1;
	for (i = 0; i < argc; i++)
		r->exec_argv[i] = argv[i];
	/* A signal that arrived while the previous image re-executed is still pending and blocked. */
	sigemptyset(&r->sigs);
	sigaddset(&r->sigs, SIGINT);
	sigaddset(&r->sigs, SIGTERM);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	pthread_sigmask(SIG_BLOCK, &r->sigs, &r->unblocked);
	sigdelset(&r->unblocked, SIGINT);
	sigdelset(&r->unblocked, SIGTERM);
	return 0;
}

/* --print-token: the effective admin token on stdout; --print-token-source: "config" when the
 * config holds it (mgmt.token or mgmt.tokens.admin), else the token file it is read from
 * (mgmt.token_file, mgmt.tokens.admin_file or the database's ".token"). @return the exit code. */
static int print_token(const struct sbx_config *cfg)
{
	char token[MGMT_TOKEN_MAX + 1], err[512];

	if (g_print_token == PRINT_TOKEN_SOURCE) {
		printf("%s\n", cfg->mgmt_token[0] != '\0' ? "config" : cfg->mgmt_token_file);
		return 0;
	}
	if (mgmt_auth_load(cfg, false, token, NULL, err, sizeof(err)) < 0) {
		fprintf(stderr, PROG ": %s\n", err);
		return 1;
	}
	printf("%s\n", token);
	return 0;
}

/* The start-up lines and the "mgmt_start" event of a first image. */
static void announce_start(struct mgmt_run *r)
{
	const struct sbx_config *cfg = &r->cfg;
	char detail[320];

	fprintf(stderr, PROG ": listening on %s port %u, database %s\n", cfg->mgmt_listen, cfg->mgmt_port,
		cfg->mgmt_database);
	if (cfg->mgmt_token[0] != '\0')
		fprintf(stderr, PROG ": token: from the config (mgmt.token or mgmt.tokens.admin)\n");
	else
		fprintf(stderr, PROG ": token: %s (%s)\n", cfg->mgmt_token_file,
			r->token_created ? "generated now" : "existing");
	if (cfg->mgmt_viewer_token[0] != '\0')
		fprintf(stderr, PROG ": viewer token: from the config (mgmt.tokens.viewer)\n");
	else if (cfg->mgmt_viewer_token_file[0] != '\0')
		fprintf(stderr, PROG ": viewer token: %s (%s)\n", cfg->mgmt_viewer_token_file,
			r->viewer_created ? "generated now" : "existing");
	else
		fprintf(stderr, PROG ": viewer token: none (no viewer role)\n");
	fprintf(stderr, PROG ": %s; reads %s\n",
		r->tls.cert != NULL ? "HTTPS only (TLS 1.2 or newer)" : "plain HTTP",
		mgmt_reads_open(cfg->mgmt_listen) ? "open (127.0.0.1)" : "need the viewer or admin token");
	if (r->tls.cert != NULL)
		fprintf(stderr, PROG ": certificate %s, SHA-256 fingerprint %s\n", cfg->mgmt_tls_cert,
			r->tls.fingerprint);
	if (r->ctx.insecure)
		fprintf(stderr, PROG ": WARNING: mgmt.insecure: plain HTTP on %s: tokens cross the network "
			"unencrypted\n", cfg->mgmt_listen);
	if (r->web_root[0] != '\0')
		fprintf(stderr, PROG ": static files from %s\n", r->web_root);
	else
		fprintf(stderr, PROG ": no static files: %s\n", r->web_err);
	snprintf(detail, sizeof(detail), "pid %d, listening on %s port %u", (int)getpid(), cfg->mgmt_listen,
		 cfg->mgmt_port);
	mgmt_db_event(&r->db, "mgmt_start", detail);
}

/*
 * Token, static files, lcore lock, listening socket (inherited across a re-exec, else opened),
 * database and history, then the attach to the primary (the EAL: signals must be blocked).
 * @return 0, or the exit code; on failure nothing needs mgmt_fini() (the process exits).
 */
static int mgmt_init(struct mgmt_run *r, const char *argv0)
{
	struct sbx_config *cfg = &r->cfg;
	char err[512], detail[320];

	/* before listening: a refused token file, certificate or address must not leave a port open
	 * that accepts nothing */
	if (mgmt_auth_policy(cfg, err, sizeof(err)) < 0 ||
	    mgmt_tls_load(cfg, &r->tls, err, sizeof(err)) < 0 ||
	    mgmt_auth_load(cfg, true, r->token, &r->token_created, err, sizeof(err)) < 0 ||
	    mgmt_auth_load_viewer(cfg, true, r->viewer_token, &r->viewer_created, err, sizeof(err)) < 0) {
		fprintf(stderr, PROG ": %s\n", err);
		return 2;
	}
	if (r->viewer_token[0] != '\0' && strcmp(r->viewer_token, r->token) == 0) {
		fprintf(stderr, PROG ": mgmt.tokens.viewer: the same token as the admin's: refused\n");
		return 2;
	}
	r->ctx.insecure = !mgmt_reads_open(cfg->mgmt_listen) && r->tls.cert == NULL;
	if (mgmt_static_root(cfg, r->web_root, sizeof(r->web_root), r->web_err, sizeof(r->web_err)) < 0)
		r->web_root[0] = '\0';
	/* before listening and before any EAL: one mgmt per prefix and lcore id (spanbox/lcore_lock.h) */
	r->lock_fd = mgmt_lcore_lock(cfg, err, sizeof(err));
	if (r->lock_fd < 0) {
		fprintf(stderr, PROG ": %s\n", err);
		return 1;
	}
	r->lfd = mgmt_inherited_listen_fd();
	r->fresh = r->lfd < 0;
	if (r->fresh && (r->lfd = open_listen(cfg->mgmt_listen, cfg->mgmt_port)) < 0)
		return r->lfd == -2 ? 2 : 1;
	if (mgmt_db_open(&r->db, cfg->mgmt_database, err, sizeof(err)) < 0) {
		fprintf(stderr, PROG ": %s\n", err);
		return 2;
	}
	/* without its history mgmt still serves everything else (history routes answer 503) */
	if (mgmt_history_open(&r->history, cfg->mgmt_database, cfg->mgmt_history_interval_s, err,
			      sizeof(err)) == 0)
		r->db.history = &r->history;
	else
		fprintf(stderr, PROG ": no stats history: %s\n", err);
	if (r->fresh)
		announce_start(r);

	r->ctx.shm = mgmt_attach(cfg, argv0, &r->eal_up, r->reason, sizeof(r->reason));
	r->ctx.down_reason = r->reason;
	r->ctx.db = &r->db;
	r->ctx.token = r->token;
	r->ctx.viewer_token = r->viewer_token;
	r->ctx.reads_open = mgmt_reads_open(cfg->mgmt_listen);
	r->ctx.tls_cert = r->tls.cert;
	r->ctx.tls_key = r->tls.key;
	r->ctx.web_root = r->web_root;
	r->ctx.changes_in_flight = &r->changes_in_flight;
	if (r->ctx.shm != NULL) {
		/* the one field mgmt writes (besides the tables' staging area): see shm.h */
		__atomic_store_n(&((struct sbx_shm *)r->ctx.shm)->mgmt_pid, (int32_t)getpid(), __ATOMIC_RELEASE);
		fprintf(stderr, PROG ": attached to primary pid %d\n", r->ctx.shm->primary_pid);
		snprintf(detail, sizeof(detail), "primary pid %d", r->ctx.shm->primary_pid);
		mgmt_db_event(&r->db, "appliance_up", detail);
		mgmt_tables_attach(r->ctx.shm); /* the config file, read once (not per change) */
	} else if (r->fresh) {
		fprintf(stderr, PROG ": appliance down: %s; retrying every %d s\n", r->reason, MGMT_RETRY_S);
		mgmt_db_event(&r->db, "appliance_down", r->reason);
	}
	return 0;
}

/* Start the HTTP daemon on r->lfd, then unblock SIGINT/SIGTERM (every thread exists now).
 * @return 0, or 1 (why on stderr). */
static int mgmt_serve(struct mgmt_run *r)
{
	char err[512];

	r->httpd = mgmt_http_start(r->lfd, &r->ctx, err, sizeof(err));
	pthread_sigmask(SIG_SETMASK, &r->unblocked, NULL);
	if (r->httpd == NULL) {
		fprintf(stderr, PROG ": %s\n", err);
		return 1;
	}
	if (r->fresh) {
		const struct mgmt_http_limits *hl = mgmt_http_limits();

		fprintf(stderr, PROG ": http: at most %u connections; above %u, or above %u from one address, "
			"a new connection closes the oldest idle one; a request must be complete %u s after "
			"the connection opened or its previous answer, an answer sent within %u s\n",
			hl->limit, hl->high, hl->share_max, hl->request_s, hl->answer_s);
	}
	return 0;
}

/* Watch the primary every MGMT_TICK_MS until a signal, a lost primary (r->lost, r->reason says
 * why) or, while down, MGMT_RETRY_S (r->retry: re-execute to attach again). */
static void mgmt_run(struct mgmt_run *r)
{
	struct mgmt_ctx *ctx = &r->ctx;
	uint64_t t0 = sbx_now_ns();

	while (!g_stop) {
		sleep_ms(MGMT_TICK_MS);
		mgmt_http_sweep(); /* idle and slow connections past their deadline */
		/* the primary's events -> SQLite, also the last ones of a primary shutting down */
		if (ctx->shm != NULL && ctx->shm->magic == SBX_SHM_MAGIC)
			mgmt_db_import_events(&r->db, ctx->shm);
		mgmt_db_flush_later(&r->db); /* events queued while a change held the write lock */
		/* a primary that does not answer but lives (stopped, hung) is not lost: re-attaching
		 * would block in rte_eal_init(); handlers answer "down" from its heartbeat meanwhile */
		if (ctx->shm != NULL && mgmt_primary_state(ctx->shm, r->reason, sizeof(r->reason)) == MGMT_PRIMARY_GONE) {
			r->lost = true;
			return;
		}
		/* stats history: a sample per interval, compaction every 10 s (never on the HTTP thread) */
		if (r->db.history != NULL)
			mgmt_history_tick(r->db.history, ctx->shm);
		/* cycles per packet over a window, stalled workers, drained pools (watch.h) */
		if (ctx->shm != NULL)
			mgmt_watch_tick(ctx->shm);
		if (ctx->shm == NULL && sbx_now_ns() - t0 >= MGMT_RETRY_S * 1000000000ULL) {
			r->retry = true;
			return;
		}
	}
}

/*
 * Stop serving: answer a change in flight, stop the copy probe and the daemon (its lanes answer
 * what they deferred; the listening socket stays open), then the detach handshake with a primary
 * that is shutting down (mgmt_pid back to 0, SBX_MGMT_DETACH_MS).
 */
static void mgmt_stop(struct mgmt_run *r)
{
	const struct sbx_shm *attached = r->ctx.shm;
	uint64_t t_lost = sbx_now_ns();
	unsigned int i;

	if (r->lost) /* from now on handlers answer "appliance down" without touching the memzone */
		__atomic_store_n(&r->ctx.shm, NULL, __ATOMIC_RELEASE);
	/* a change in flight is answered first (its client gets a 2xx, or a 503 "nothing was
	 * changed", never an empty reply): at most mgmt's apply timeout, and some slack */
	for (i = 0; i < (SBX_TABLES_APPLY_TIMEOUT_MS + CHANGE_DRAIN_SLACK_MS) / CHANGE_DRAIN_POLL_MS &&
		    __atomic_load_n(&r->changes_in_flight, __ATOMIC_ACQUIRE) > 0; i++)
		sleep_ms(CHANGE_DRAIN_POLL_MS);
	if (r->lost)
		sleep_ms(ANSWER_FLUSH_MS); /* let MHD send that answer */
	mgmt_memprobe_shutdown(); /* kills a running probe: its lane's job ends at once */
	r->lfd = mgmt_http_stop(r->httpd); /* keeps the listening socket open */
	r->httpd = NULL;
	mgmt_db_flush_later(&r->db); /* the lanes' last queued events */
	/* no handler runs any more: tell a primary that is shutting down that we left its memzone
	 * (unless we took so long that it stopped waiting and may have freed it: SBX_MGMT_DETACH_MS) */
	if (attached != NULL &&
	    (!r->lost || sbx_now_ns() - t_lost < (SBX_MGMT_DETACH_MS - DETACH_MARGIN_MS) * 1000000ULL) &&
	    attached->magic == SBX_SHM_MAGIC)
		__atomic_store_n(&((struct sbx_shm *)attached)->mgmt_pid, 0, __ATOMIC_RELEASE);
	if (r->lost) {
		fprintf(stderr, PROG ": appliance down: %s; re-attaching\n", r->reason);
		mgmt_db_event(&r->db, "appliance_down", r->reason);
	}
}

/*
 * Close the store, history and database, leave the EAL, and re-execute when the appliance went
 * or stayed down (not after a signal), handing over the listening socket and the lcore lock.
 * @return @p rc, or 1 when the re-exec failed.
 */
static int mgmt_fini(struct mgmt_run *r, int rc)
{
	mgmt_store_close();
	if (r->db.history != NULL)
		mgmt_history_close(r->db.history);
	mgmt_db_close(&r->db);
	/* With the primary gone the EAL cannot tell it we leave (it would only log errors), and
	 * exec drops our mappings anyway; the next primary clears the runtime directory. */
	if (r->eal_up && rte_eal_primary_proc_alive(NULL))
		rte_eal_cleanup();
	/* Signals stay blocked (and pending) across exec: the new image sees them and exits. */
	pthread_sigmask(SIG_BLOCK, &r->sigs, NULL);
	if ((r->lost || r->retry) && !g_stop) {
		if (r->lfd >= 0)
			mgmt_reexec(r->lfd, r->lock_fd, r->exec_argv); /* returns only on failure */
		fprintf(stderr, PROG ": cannot re-execute: %s\n",
			r->lfd >= 0 ? strerror(errno) : "lost the listening socket");
		rc = 1;
	}
	if (r->lfd >= 0)
		close(r->lfd);
	sbx_lcore_unlock(r->lock_fd, r->cfg.file_prefix, r->cfg.mgmt_lcore);
	mgmt_tls_free(&r->tls);
	free(r->exec_argv);
	return rc;
}

int main(int argc, char **argv)
{
	static struct mgmt_run r = { .lfd = -1, .lock_fd = -1 };
	int rc;

	if ((rc = mgmt_setup(&r, argc, argv)) != 0)
		return rc;
	rc = parse_args(argc, argv, &r.cfg);
	if (rc != 0)
		return rc < 0 ? 0 : rc;
	if (g_print_token)
		return print_token(&r.cfg);
	if ((rc = mgmt_init(&r, argv[0])) != 0)
		return rc;
	rc = mgmt_serve(&r);
	if (rc == 0) {
		mgmt_run(&r);
		mgmt_stop(&r);
	}
	return mgmt_fini(&r, rc);
}
