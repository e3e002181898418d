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
#include "spanbox/lcore_lock.h"
#include "attach.h"
#include "auth.h"
#include "db.h"
#include "history.h"
#include "store.h"
#include "system.h"
#include "http.h"
#include "static.h"
#include "watch.h"

#define PROG "spanbox-mgmt"
/* connections the kernel queues for accept(): a burst of new connections (a flood, or every
 * client reconnecting) waits there instead of having SYNs dropped (capped by net.core.somaxconn) */
#define LISTEN_BACKLOG 4096

static volatile sig_atomic_t g_stop;
static struct mgmt_history g_history; /* the stats history (history.h): sampled by the main loop */
static bool g_print_token; /* --print-token: print the effective token and exit */

static void on_signal(int sig)
{
	(void)sig;
	g_stop = 1;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: " PROG " -c CONFIG.json [--listen ADDR] [--port N] [--db PATH] [--print-token]\n"
		   "       " PROG " --routes   (print every route as \"METHOD PATH\" and exit)\n");
}

/* Command line into @p cfg (after loading the config it names). @return 0, or an exit code. */
static int parse_args(int argc, char **argv, struct sbx_config *cfg)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' }, { "listen", required_argument, NULL, 'l' },
		{ "port", required_argument, NULL, 'p' },   { "db", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },         { "print-token", no_argument, NULL, 't' },
		{ "routes", no_argument, NULL, 'r' },
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
		case 't': g_print_token = true; break;
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

int main(int argc, char **argv)
{
	const struct timespec tick = { 0, 100 * 1000 * 1000 };
	struct sigaction sa = { .sa_handler = on_signal };
	struct sbx_config cfg;
	struct mgmt_db db;
	struct mgmt_ctx ctx = { 0 };
	static int changes_in_flight;
	const struct sbx_shm *attached;
	uint64_t t_lost;
	struct MHD_Daemon *httpd;
	char **exec_argv, reason[256] = "", err[512], detail[320];
	char token[MGMT_TOKEN_MAX + 1], web_root[4096], web_err[512];
	bool token_created;
	sigset_t sigs, old;
	bool eal_up, fresh, lost = false, retry = false;
	uint64_t t0;
	int rc, lfd, i, lock_fd;

	/* getopt permutes argv: keep the original order for re-executing */
	exec_argv = calloc((size_t)argc + 1, sizeof(*exec_argv));
	if (exec_argv == NULL)
		return 1;
	for (i = 0; i < argc; i++)
		exec_argv[i] = argv[i];

	/* A signal that arrived while the previous image re-executed is still pending and blocked. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* Block them while threads are created (EAL, MHD) so that only this thread takes them. */
	pthread_sigmask(SIG_BLOCK, &sigs, &old);
	sigdelset(&old, SIGINT);
	sigdelset(&old, SIGTERM);

	rc = parse_args(argc, argv, &cfg);
	if (rc != 0)
		return rc < 0 ? 0 : rc;
	if (g_print_token) {
		if (mgmt_auth_load(&cfg, false, token, NULL, err, sizeof(err)) < 0) {
			fprintf(stderr, PROG ": %s\n", err);
			return 1;
		}
		printf("%s\n", token);
		return 0;
	}
	/* before listening: a refused token file must not leave a port open that accepts nothing */
	if (mgmt_auth_load(&cfg, true, token, &token_created, err, sizeof(err)) < 0) {
		fprintf(stderr, PROG ": %s\n", err);
		return 2;
	}
	if (mgmt_static_root(&cfg, web_root, sizeof(web_root), web_err, sizeof(web_err)) < 0)
		web_root[0] = '\0';
	/* before listening and before any EAL: one mgmt per prefix and lcore id (spanbox/lcore_lock.h) */
	lock_fd = mgmt_lcore_lock(&cfg, err, sizeof(err));
	if (lock_fd < 0) {
		fprintf(stderr, PROG ": %s\n", err);
		return 1;
	}

	lfd = mgmt_inherited_listen_fd();
	fresh = lfd < 0;
	if (fresh && (lfd = open_listen(cfg.mgmt_listen, cfg.mgmt_port)) < 0)
		return lfd == -2 ? 2 : 1;
	if (mgmt_db_open(&db, cfg.mgmt_database, err, sizeof(err)) < 0) {
		fprintf(stderr, PROG ": %s\n", err);
		return 2;
	}
	/* without its history mgmt still serves everything else (history routes answer 503) */
	if (mgmt_history_open(&g_history, cfg.mgmt_database, cfg.mgmt_history_interval_s, err,
			      sizeof(err)) == 0)
		db.history = &g_history;
	else
		fprintf(stderr, PROG ": no stats history: %s\n", err);
	if (fresh) {
		fprintf(stderr, PROG ": listening on %s port %u, database %s\n", cfg.mgmt_listen,
			cfg.mgmt_port, cfg.mgmt_database);
		if (cfg.mgmt_token[0] != '\0')
			fprintf(stderr, PROG ": token: from the config (mgmt.token)\n");
		else
			fprintf(stderr, PROG ": token: %s (%s)\n", cfg.mgmt_token_file,
				token_created ? "generated now" : "existing");
		if (web_root[0] != '\0')
			fprintf(stderr, PROG ": static files from %s\n", web_root);
		else
			fprintf(stderr, PROG ": no static files: %s\n", web_err);
		snprintf(detail, sizeof(detail), "pid %d, listening on %s port %u", (int)getpid(),
			 cfg.mgmt_listen, cfg.mgmt_port);
		mgmt_db_event(&db, "mgmt_start", detail);
	}

	ctx.shm = mgmt_attach(&cfg, argv[0], &eal_up, reason, sizeof(reason));
	ctx.down_reason = reason;
	ctx.db = &db;
	ctx.token = token;
	ctx.web_root = web_root;
	ctx.changes_in_flight = &changes_in_flight;
	if (ctx.shm != NULL) {
		/* the one field mgmt writes (besides the tables' staging area): see shm.h */
		__atomic_store_n(&((struct sbx_shm *)ctx.shm)->mgmt_pid, (int32_t)getpid(), __ATOMIC_RELEASE);
		fprintf(stderr, PROG ": attached to primary pid %d\n", ctx.shm->primary_pid);
		snprintf(detail, sizeof(detail), "primary pid %d", ctx.shm->primary_pid);
		mgmt_db_event(&db, "appliance_up", detail);
		mgmt_tables_attach(ctx.shm); /* the config file, read once (not per change) */
	} else if (fresh) {
		fprintf(stderr, PROG ": appliance down: %s; retrying every %d s\n", reason, MGMT_RETRY_S);
		mgmt_db_event(&db, "appliance_down", reason);
	}

	httpd = mgmt_http_start(lfd, &ctx, err, sizeof(err));
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (httpd == NULL) {
		fprintf(stderr, PROG ": %s\n", err);
		rc = 1;
		goto out;
	}
	if (fresh) {
		const struct mgmt_http_limits *hl = mgmt_http_limits();

		fprintf(stderr, PROG ": http: at most %u connections; above %u, or above %u from one address, "
			"a new connection closes the oldest idle one; a request must be complete %u s after "
			"the connection opened or its previous answer, an answer sent within %u s\n",
			hl->limit, hl->high, hl->share_max, hl->request_s, hl->answer_s);
	}

	/* Watch the primary; while down, re-execute every MGMT_RETRY_S to attach again. */
	t0 = sbx_now_ns();
	while (!g_stop) {
		nanosleep(&tick, NULL);
		mgmt_http_sweep(); /* idle and slow connections past their deadline */
		/* the primary's events -> SQLite, also the last ones of a primary shutting down */
		if (ctx.shm != NULL && ctx.shm->magic == SBX_SHM_MAGIC)
			mgmt_db_import_events(&db, ctx.shm);
		mgmt_db_flush_later(&db); /* events queued while a change held the write lock */
		if (ctx.shm != NULL && !mgmt_primary_alive(ctx.shm, reason, sizeof(reason))) {
			lost = true;
			break;
		}
		/* stats history: a sample per interval, compaction every 10 s (never on the HTTP thread) */
		if (db.history != NULL)
			mgmt_history_tick(db.history, ctx.shm);
		/* cycles per packet over a window, stalled workers, drained pools (watch.h) */
		if (ctx.shm != NULL)
			mgmt_watch_tick(ctx.shm);
		if (ctx.shm == NULL && sbx_now_ns() - t0 >= MGMT_RETRY_S * 1000000000ULL) {
			retry = true;
			break;
		}
	}
	attached = ctx.shm;
	t_lost = sbx_now_ns();
	if (lost) /* from now on handlers answer "appliance down" without touching the memzone */
		__atomic_store_n(&ctx.shm, NULL, __ATOMIC_RELEASE);
	/* a change in flight is answered first (its client gets a 2xx, or a 503 "nothing was
	 * changed", never an empty reply): at most the primary's 5 s request timeout */
	for (int i = 0; i < 600 && __atomic_load_n(&changes_in_flight, __ATOMIC_ACQUIRE) > 0; i++)
		nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
	if (lost)
		nanosleep(&(struct timespec){ 0, 50000000 }, NULL); /* let MHD send that answer */
	mgmt_memprobe_shutdown(); /* kills a running probe: its lane's job ends at once */
	lfd = mgmt_http_stop(httpd); /* keeps the listening socket open */
	mgmt_db_flush_later(&db); /* the lanes' last queued events */
	/* no handler runs any more: tell a primary that is shutting down that we left its memzone
	 * (unless we took so long that it stopped waiting and may have freed it: SBX_MGMT_DETACH_MS) */
	if (attached != NULL && (!lost || sbx_now_ns() - t_lost < (SBX_MGMT_DETACH_MS - 200) * 1000000ULL) &&
	    attached->magic == SBX_SHM_MAGIC)
		__atomic_store_n(&((struct sbx_shm *)attached)->mgmt_pid, 0, __ATOMIC_RELEASE);
	if (lost) {
		fprintf(stderr, PROG ": appliance down: %s; re-attaching\n", reason);
		mgmt_db_event(&db, "appliance_down", reason);
	}
out:
	mgmt_store_close();
	if (db.history != NULL)
		mgmt_history_close(db.history);
	mgmt_db_close(&db);
	/* With the primary gone the EAL cannot tell it we leave (it would only log errors), and
	 * exec drops our mappings anyway; the next primary clears the runtime directory. */
	if (eal_up && rte_eal_primary_proc_alive(NULL))
		rte_eal_cleanup();
	/* Signals stay blocked (and pending) across exec: the new image sees them and exits. */
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	if ((lost || retry) && !g_stop) {
		if (lfd >= 0)
			mgmt_reexec(lfd, lock_fd, exec_argv); /* returns only on failure */
		fprintf(stderr, PROG ": cannot re-execute: %s\n",
			lfd >= 0 ? strerror(errno) : "lost the listening socket");
		rc = 1;
	}
	if (lfd >= 0)
		close(lfd);
	sbx_lcore_unlock(lock_fd, cfg.file_prefix, cfg.mgmt_lcore);
	free(exec_argv);
	return rc;
}
