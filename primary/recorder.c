/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The recorder: the half of a capture that writes files (docs/CAPTURE.md "Recording through the
 * API"). A capture is a mirror session whose destination is "recorder": the workers make pcapng
 * copies of its frames (rte_pcapng_copy, secondary/capture.c) from the capture pool and enqueue
 * them to the capture's ring; a thread of the primary per capture (not an EAL lcore: it takes no
 * worker's core and never delays the main loop's supervision or pcap bridging) drains its ring
 * and writes the blocks to <mgmt.captures.directory>/<id>/<n>.pcapng, one file or a ring of
 * files, until a stop condition, the quota share, a mgmt restart or the removal of the session.
 *
 * Why the primary: it outlives mgmt and every worker, it owns the pools (the capture pool is one
 * more of its pools, so copies can never take an mbuf forwarding needs), it already runs a
 * thread per concern (tables, bridge), and it sees every port, pcap file ports included, which
 * are not ethdevs (shm ports[].port_id = RTE_MAX_ETHPORTS).
 *
 * Why the file's header blocks are written here and not by rte_pcapng_fdopen(): DPDK 22.11's
 * rte_pcapng_fdopen() describes every ethdev of the process (RTE_ETH_FOREACH_DEV), names each by
 * its kernel ifindex (if_indextoname: a tap moved into a namespace gets the name of an unrelated
 * host interface, a pcap port none at all) and has no rte_pcapng_add_interface() (DPDK 23.11), and
 * rte_pcapng_write_packets() maps a copy's port through a table indexed by ethdev port id, which
 * pcap file ports do not have. So this file writes the Section Header Block (naming spanbox and
 * its version), one Interface Description Block per spanbox port (its name, link type Ethernet,
 * the snaplen, nanosecond timestamps) and the Interface Statistics Blocks at close, in the pcapng
 * format of draft-ietf-opsawg-pcapng; the packet blocks are rte_pcapng_copy()'s, written as they
 * are with the interface id set to the spanbox port index.
 *
 * Threads and locking: every capture has a writer thread of its own (started with its slot, joined
 * when the slot is freed) that drains its ring and writes its files; it shares nothing with the
 * other captures' writers, so a write (or open) that blocks, a slow disk or a FIFO nobody reads,
 * stalls that capture only: the others keep writing and ending on their stop conditions. rec.lock
 * guards the slot table alone: the tables thread adds slots (sbx_recorder_add, before a change is
 * published) and frees them (sbx_recorder_prune, after its grace period), sbx_recorder_fini frees
 * them all; no writer takes it, so a blocked write never holds up a change of the tables (the
 * workers' hand-over to new rings) nor the start of another capture. The one wait left: freeing
 * a slot joins its writer, so deleting a capture whose own write blocks waits for that write. A
 * writer alone touches its rec_slot and its shm slot's counters after the start (before: the
 * tables thread, which creates the thread afterwards; after the join: the tables thread again).
 * The workers never take the lock (they see only the ring and the slot's `ended` flag).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "primary.h"

#ifndef SBX_VERSION
#define SBX_VERSION "unknown"
#endif

#define REC_BURST 256
#define MIB (1024ULL * 1024ULL)

/* pcapng block types and option codes (draft-ietf-opsawg-pcapng) */
#define PCAPNG_SHB 0x0A0D0D0Au
#define PCAPNG_IDB 0x00000001u
#define PCAPNG_ISB 0x00000005u
#define PCAPNG_EPB 0x00000006u
#define PCAPNG_MAGIC 0x1A2B3C4Du

/* What the recorder keeps of one capture beside its shm slot. */
struct rec_slot {
	bool used;
	struct sbx_mirror_cfg mc;   /**< the session as it started (files and stop conditions) */
	struct rte_ring *ring;
	char dir[SBX_PATH_LEN + 16]; /**< <directory>/<id> */
	int fd;                     /**< the file being written, -1 none */
	uint64_t file_bytes;        /**< bytes of that file */
	uint64_t file_start_ns;     /**< CLOCK_REALTIME of its start */
	uint64_t start_mono_ns;     /**< CLOCK_MONOTONIC of the capture's start (stop.seconds) */
	uint64_t file_mono_ns;      /**< CLOCK_MONOTONIC of the file's start (files.seconds) */
	uint64_t ifrecv[SBX_MAX_PORTS]; /**< frames of each port written into this file */
	uint64_t file_frames;       /**< frames written into this file */
	uint64_t drops_at_open;     /**< the capture's drops when this file was opened */
	pthread_t tid;              /**< its writer thread (slot_writer) */
	volatile bool quit;         /**< set by slot_free: the writer returns */
};

static struct {
	struct sbx_primary *p;
	pthread_mutex_t lock;       /**< the slot table (used flags): add, prune, fini */
	bool started;
	struct rte_mempool *mp;
	struct rec_slot s[SBX_CAPTURE_SLOTS];
} rec = { .lock = PTHREAD_MUTEX_INITIALIZER };

static size_t pad4(size_t n)
{
	return (n + 3) & ~(size_t)3;
}

/* Append option @code of @len bytes to @buf at *@off (padded to 32 bits). */
static void opt_add(uint8_t *buf, size_t *off, uint16_t code, const void *data, uint16_t len)
{
	memcpy(buf + *off, &code, 2);
	memcpy(buf + *off + 2, &len, 2);
	memcpy(buf + *off + 4, data, len);
	memset(buf + *off + 4 + len, 0, pad4(len) - len);
	*off += 4 + pad4(len);
}

/* Close block @buf of type @type whose body (after type and length) ends at @off: opt_endofopt
 * when @opts, the trailing length. @return the block length. */
static size_t block_end(uint8_t *buf, size_t off, uint32_t type, bool opts)
{
	uint32_t len;

	if (opts) {
		memset(buf + off, 0, 4);
		off += 4;
	}
	len = (uint32_t)(off + 4);
	memcpy(buf, &type, 4);
	memcpy(buf + 4, &len, 4);
	memcpy(buf + off, &len, 4);
	return len;
}

static int write_all(int fd, const void *buf, size_t len)
{
	return write(fd, buf, len) == (ssize_t)len ? 0 : -1;
}

/* The Section Header Block and one Interface Description Block per port. @return bytes, -1. */
static ssize_t write_header(struct rec_slot *sl, uint32_t n)
{
	const struct sbx_config *cfg = rec.p->cfg;
	uint8_t buf[1024];
	char text[256];
	size_t off = 8, total = 0;
	uint32_t magic = PCAPNG_MAGIC, snap = sl->mc.snaplen;
	uint16_t ver[2] = { 1, 0 };
	int64_t section_len = -1;
	uint8_t tsresol = 9; /* nanoseconds, as rte_pcapng_copy() stamps */
	uint16_t i, link = 1; /* LINKTYPE_ETHERNET */

	memcpy(buf + off, &magic, 4);
	memcpy(buf + off + 4, ver, 4);
	memcpy(buf + off + 8, &section_len, 8);
	off += 16;
	snprintf(text, sizeof(text), "spanbox %s", SBX_VERSION);
	opt_add(buf, &off, 4, text, (uint16_t)strlen(text)); /* shb_userappl */
	opt_add(buf, &off, 3, "Linux", 5);                   /* shb_os */
	snprintf(text, sizeof(text), "spanbox capture %u (%s), file %u", sl->mc.id, sl->mc.name, n);
	opt_add(buf, &off, 1, text, (uint16_t)strlen(text)); /* opt_comment */
	off = block_end(buf, off, PCAPNG_SHB, true);
	if (write_all(sl->fd, buf, off) != 0)
		return -1;
	total += off;
	for (i = 0; i < cfg->nb_ports; i++) {
		off = 8;
		memcpy(buf + off, &link, 2);
		memset(buf + off + 2, 0, 2);
		memcpy(buf + off + 4, &snap, 4); /* 0: no limit */
		off += 8;
		opt_add(buf, &off, 2, cfg->ports[i].name, (uint16_t)strlen(cfg->ports[i].name)); /* if_name */
		snprintf(text, sizeof(text), "spanbox port %u: %.200s", i, cfg->ports[i].devargs);
		opt_add(buf, &off, 3, text, (uint16_t)strlen(text)); /* if_description */
		opt_add(buf, &off, 9, &tsresol, 1);                  /* if_tsresol */
		off = block_end(buf, off, PCAPNG_IDB, true);
		if (write_all(sl->fd, buf, off) != 0)
			return -1;
		total += off;
	}
	return (ssize_t)total;
}

/* The capture's slot in shm. */
static struct sbx_capture_shm *slot_shm(const struct rec_slot *sl)
{
	return &rec.p->shm->captures[sl - rec.s];
}

/* The capture's losses so far: workers' (ring full, no mbuf) and the recorder's (disk). */
static uint64_t capture_drops(const struct rec_slot *sl)
{
	const struct sbx_tables *t = sbx_shm_tables(rec.p->shm);
	uint64_t d = slot_shm(sl)->drop_disk;
	uint16_t i, w;

	for (i = 0; i < t->cfg.nb_mirrors; i++) {
		if (t->cfg.mirrors[i].id != sl->mc.id)
			continue;
		for (w = 0; w < t->cfg.nb_workers && w < SBX_MAX_WORKERS; w++) {
			const struct sbx_mirror_counters *c = &sbx_shm_worker(rec.p->shm, w)->stats.mirror[t->cset[i]];

			d += c->drop_txfull + c->drop_nombuf;
		}
	}
	return d;
}

static void file_path(const struct rec_slot *sl, uint32_t n, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%u.pcapng", sl->dir, n);
}

/* One Interface Statistics Block per source port, then close the file. */
static void file_close(struct rec_slot *sl)
{
	struct sbx_capture_shm *cs = slot_shm(sl);
	uint64_t now = sbx_realtime_ns(), drops = capture_drops(sl) - sl->drops_at_open;
	uint8_t buf[128];
	uint16_t k;
	bool first = true;

	if (sl->fd < 0)
		return;
	for (k = 0; k < sl->mc.nb_sources; k++) {
		uint16_t port = sl->mc.sources[k].port;
		uint32_t v[2];
		uint64_t recv = sl->ifrecv[port], drop = first ? drops : 0;
		size_t off = 8;
		uint32_t ifid = port;

		memcpy(buf + off, &ifid, 4);
		v[0] = (uint32_t)(now >> 32);
		v[1] = (uint32_t)now;
		memcpy(buf + off + 4, v, 8);
		off += 12;
		v[0] = (uint32_t)(sl->file_start_ns >> 32);
		v[1] = (uint32_t)sl->file_start_ns;
		opt_add(buf, &off, 2, v, 8); /* isb_starttime */
		v[0] = (uint32_t)(now >> 32);
		v[1] = (uint32_t)now;
		opt_add(buf, &off, 3, v, 8); /* isb_endtime */
		opt_add(buf, &off, 4, &recv, 8); /* isb_ifrecv: frames the capture took on the port */
		opt_add(buf, &off, 5, &drop, 8); /* isb_ifdrop: the capture's losses (on its first source) */
		off = block_end(buf, off, PCAPNG_ISB, true);
		if (write_all(sl->fd, buf, off) == 0) {
			sl->file_bytes += off;
			cs->disk_bytes += off;
			cs->bytes += off;
		}
		first = false;
	}
	close(sl->fd);
	sl->fd = -1;
}

/* Open file @n of the capture (its header written); a ring deletes its oldest file beyond count.
 * @return 0, -1 (errno). */
static int file_open(struct rec_slot *sl, uint32_t n)
{
	struct sbx_capture_shm *cs = slot_shm(sl);
	char path[SBX_PATH_LEN + 32];
	ssize_t h;

	file_path(sl, n, path, sizeof(path));
	sl->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
	if (sl->fd < 0)
		return -1;
	sl->file_bytes = 0;
	sl->file_start_ns = sbx_realtime_ns();
	sl->file_mono_ns = sbx_now_ns();
	memset(sl->ifrecv, 0, sizeof(sl->ifrecv));
	sl->file_frames = 0;
	sl->drops_at_open = capture_drops(sl);
	h = write_header(sl, n);
	if (h < 0) {
		close(sl->fd);
		sl->fd = -1;
		unlink(path);
		return -1;
	}
	sl->file_bytes = (uint64_t)h;
	cs->disk_bytes += (uint64_t)h;
	cs->bytes += (uint64_t)h;
	if (cs->file_first == 0)
		cs->file_first = n;
	cs->file_last = n;
	while (sl->mc.rec.file_count > 0 && cs->file_last - cs->file_first + 1 > sl->mc.rec.file_count) {
		struct stat st;

		file_path(sl, cs->file_first, path, sizeof(path));
		if (stat(path, &st) == 0 && unlink(path) == 0)
			cs->disk_bytes -= RTE_MIN((uint64_t)st.st_size, cs->disk_bytes);
		cs->file_first++;
	}
	return 0;
}

/* Record in <dir>/state what the capture is ("running", "ended: <reason>"): mgmt reads it for a
 * capture no primary runs any more (docs/CAPTURE.md). */
static void state_write(const struct rec_slot *sl, const char *text)
{
	char path[sizeof(sl->dir) + 8];
	FILE *f;

	snprintf(path, sizeof(path), "%s/state", sl->dir);
	f = fopen(path, "w");
	if (f != NULL) {
		fprintf(f, "%s\n", text);
		fclose(f);
	}
}

/* End the capture: the workers stop copying, the file is closed with its statistics. */
static void capture_end(struct rec_slot *sl, const char *reason)
{
	struct sbx_capture_shm *cs = slot_shm(sl);
	char text[128];

	if (cs->state != SBX_CAP_RUNNING)
		return;
	__atomic_store_n(&cs->ended, 1, __ATOMIC_RELEASE);
	file_close(sl);
	snprintf(cs->reason, sizeof(cs->reason), "%s", reason);
	cs->end_ns = sbx_realtime_ns();
	__atomic_store_n(&cs->state, SBX_CAP_ENDED, __ATOMIC_RELEASE);
	snprintf(text, sizeof(text), "ended: %s", reason);
	state_write(sl, text);
	sbx_event(rec.p, "capture_end", -1, 0, "capture %u: %s (%llu frames, %llu bytes)", sl->mc.id, reason,
		  (unsigned long long)cs->frames, (unsigned long long)cs->bytes);
}

/* Start the next file of the ring. @return 0, -1 (the capture ended). */
static int file_next(struct rec_slot *sl)
{
	struct sbx_capture_shm *cs = slot_shm(sl);
	char why[96];

	file_close(sl);
	if (file_open(sl, cs->file_last + 1) != 0) {
		snprintf(why, sizeof(why), "cannot open file %u: %s", cs->file_last + 1, strerror(errno));
		capture_end(sl, why);
		return -1;
	}
	return 0;
}

/* Why the next block of @len bytes may not be written: NULL it may, "" the file is full (next
 * file), else the stop condition. */
static const char *limit(const struct rec_slot *sl, uint64_t frames, uint64_t bytes, uint64_t len)
{
	const struct sbx_capture_cfg *r = &sl->mc.rec;
	const struct sbx_capture_shm *cs = slot_shm(sl);

	if (r->stop_packets && cs->frames + frames >= r->stop_packets)
		return "stop.packets";
	if (r->stop_bytes && cs->bytes + bytes + len > r->stop_bytes)
		return "stop.bytes";
	if (r->file_mb && sl->file_bytes + bytes + len > r->file_mb * MIB && sl->file_frames + frames > 0)
		return ""; /* a file holds at least one frame, however big */
	if (r->max_bytes && cs->disk_bytes + bytes + len > r->max_bytes)
		return "quota";
	return NULL;
}

/*
 * Write the @p n pcapng copies of @p pkts (consumed) into the capture's files: as many blocks a
 * writev() as fit the file and the stop conditions, the next file when one is full, the end at a
 * stop condition (what remains is freed: taken after the end). A failed or short write loses its
 * blocks (drop_disk) and cuts the file back to its last whole block, so it stays readable.
 */
static void write_packets(struct rec_slot *sl, struct rte_mbuf **pkts, unsigned int n)
{
	struct sbx_capture_shm *cs = slot_shm(sl);
	struct iovec iov[IOV_MAX];
	unsigned int i = 0;

	while (i < n && cs->state == SBX_CAP_RUNNING) {
		uint64_t bytes = 0;
		unsigned int j, cnt = 0, niov = 0;
		const char *why = NULL;
		ssize_t w;

		for (j = i; j < n; j++) {
			struct rte_mbuf *m = pkts[j], *seg;
			uint32_t ifid = m->port;

			why = limit(sl, cnt, bytes, m->pkt_len);
			if (why != NULL || niov + m->nb_segs > IOV_MAX)
				break;
			/* the Enhanced Packet Block of rte_pcapng_copy(): the interface is the port's IDB */
			memcpy(rte_pktmbuf_mtod_offset(m, uint8_t *, 8), &ifid, 4);
			for (seg = m; seg != NULL; seg = seg->next) {
				iov[niov].iov_base = rte_pktmbuf_mtod(seg, void *);
				iov[niov++].iov_len = seg->data_len;
			}
			bytes += m->pkt_len;
			cnt++;
		}
		if (cnt > 0) {
			w = writev(sl->fd, iov, (int)niov);
			if (w == (ssize_t)bytes) {
				for (j = i; j < i + cnt; j++)
					sl->ifrecv[pkts[j]->port % SBX_MAX_PORTS]++;
				sl->file_bytes += bytes;
				sl->file_frames += cnt;
				cs->frames += cnt;
				cs->bytes += bytes;
				cs->disk_bytes += bytes;
			} else {
				if (w > 0 && ftruncate(sl->fd, (off_t)sl->file_bytes) == 0)
					lseek(sl->fd, (off_t)sl->file_bytes, SEEK_SET);
				cs->drop_disk += cnt;
			}
			rte_pktmbuf_free_bulk(pkts + i, cnt);
			i += cnt;
		}
		if (why != NULL && why[0] == '\0') {
			if (file_next(sl) != 0)
				break;
		} else if (why != NULL) {
			capture_end(sl, why);
		}
	}
	if (i < n)
		rte_pktmbuf_free_bulk(pkts + i, n - i);
}

/* The conditions of time and of mgmt, checked every loop. */
static void check_time(struct rec_slot *sl, uint64_t now)
{
	const struct sbx_capture_cfg *r = &sl->mc.rec;
	int32_t mgmt = __atomic_load_n(&rec.p->shm->mgmt_pid, __ATOMIC_ACQUIRE);

	if (r->stop_packets && slot_shm(sl)->frames >= r->stop_packets)
		capture_end(sl, "stop.packets");
	else if (r->owner_pid != 0 && mgmt != r->owner_pid)
		capture_end(sl, mgmt == 0 ? "mgmt stopped" : "mgmt restarted");
	else if (r->stop_seconds && now - sl->start_mono_ns >= r->stop_seconds * 1000000000ULL)
		capture_end(sl, "stop.seconds");
	else if (r->file_seconds && now - sl->file_mono_ns >= r->file_seconds * 1000000000ULL)
		file_next(sl);
}

/* The writer of one capture (@p arg: its rec_slot), until slot_free sets quit: drains the ring
 * into the files while it runs, frees what the workers still enqueue after its end (1 ms naps
 * when the ring is empty, 10 ms once ended). */
static void *slot_writer(void *arg)
{
	struct rec_slot *sl = arg;
	struct rte_mbuf *pkts[REC_BURST];

	while (!sl->quit) {
		unsigned int n = rte_ring_sc_dequeue_burst(sl->ring, (void **)pkts, REC_BURST, NULL);
		bool running = slot_shm(sl)->state == SBX_CAP_RUNNING;

		if (running) {
			write_packets(sl, pkts, n);
			if (slot_shm(sl)->state == SBX_CAP_RUNNING)
				check_time(sl, sbx_now_ns());
		} else if (n > 0) {
			rte_pktmbuf_free_bulk(pkts, n); /* taken before the workers saw the end */
		}
		if (n == 0) {
			struct timespec nap = { 0, running ? 1000000 : 10000000 };

			nanosleep(&nap, NULL);
		}
	}
	return NULL;
}

/* Remove the files of a previous capture with the same id from @p dir (numbers only, and state). */
static void dir_clear(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		char path[SBX_PATH_LEN + 300];
		size_t digits = strspn(e->d_name, "0123456789");

		if ((digits > 0 && strcmp(e->d_name + digits, ".pcapng") == 0) || strcmp(e->d_name, "state") == 0) {
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			unlink(path);
		}
	}
	closedir(d);
}

/* The capture pool, created at the first capture: copies never take an mbuf a port needs. */
static struct rte_mempool *capture_pool(void)
{
	int socket = rec.p->shm->nb_pools ? rec.p->shm->pools[0].socket_id : 0;

	if (rec.mp == NULL)
		rec.mp = rte_mempool_lookup(SBX_CAPTURE_POOL_NAME);
	if (rec.mp == NULL) /* cache 0: no lcore cache a dead worker could strand */
		rec.mp = rte_pktmbuf_pool_create(SBX_CAPTURE_POOL_NAME, SBX_CAPTURE_POOL_MBUFS, 0, 0,
						 RTE_MBUF_DEFAULT_BUF_SIZE, socket < 0 ? 0 : socket);
	return rec.mp;
}

/* Start capture @p mc in a free slot. @return 0, -1 with "field: reason" in @p err. */
static int capture_start(const struct sbx_mirror_cfg *mc, unsigned int idx, char *err, size_t errlen)
{
	const struct sbx_config *cfg = rec.p->cfg;
	struct rec_slot *sl = NULL;
	struct sbx_capture_shm *cs;
	unsigned int k, running = 0;

	for (k = 0; k < SBX_CAPTURE_SLOTS; k++) /* ended ones keep their slot, but do not count */
		running += rec.s[k].used && slot_shm(&rec.s[k])->state == SBX_CAP_RUNNING;
	for (k = 0; k < SBX_CAPTURE_SLOTS && sl == NULL; k++)
		if (!rec.s[k].used)
			sl = &rec.s[k];
	if (sl == NULL || running >= SBX_MAX_CAPTURES) {
		snprintf(err, errlen, "mirrors[%u].destination.recorder: at most %d captures recording at once", idx,
			 SBX_MAX_CAPTURES);
		return -1;
	}
	if (capture_pool() == NULL) {
		snprintf(err, errlen, "mirrors[%u].destination.recorder: no capture pool: %s", idx,
			 rte_strerror(rte_errno));
		return -1;
	}
	memset(sl, 0, sizeof(*sl));
	sl->fd = -1;
	sl->mc = *mc;
	cs = slot_shm(sl);
	memset(cs, 0, sizeof(*cs));
	cs->id = mc->id;
	snprintf(cs->ring, sizeof(cs->ring), "sbx_cap_%u_%u", k - 1, mc->id);
	sl->ring = rte_ring_create(cs->ring, SBX_CAPTURE_RING_SIZE, SOCKET_ID_ANY, RING_F_SC_DEQ);
	if (sl->ring == NULL) {
		snprintf(err, errlen, "mirrors[%u].destination.recorder: ring %s: %s", idx, cs->ring,
			 rte_strerror(rte_errno));
		return -1;
	}
	snprintf(sl->dir, sizeof(sl->dir), "%s/%u", cfg->capture_dir, mc->id);
	if ((mkdir(cfg->capture_dir, 0750) != 0 && errno != EEXIST) || (mkdir(sl->dir, 0750) != 0 && errno != EEXIST)) {
		snprintf(err, errlen, "mgmt.captures.directory: cannot create %s: %s", sl->dir, strerror(errno));
		rte_ring_free(sl->ring);
		return -1;
	}
	dir_clear(sl->dir);
	sl->start_mono_ns = sbx_now_ns();
	cs->start_ns = sbx_realtime_ns();
	if (file_open(sl, 1) != 0) {
		snprintf(err, errlen, "mgmt.captures.directory: cannot write %s/1.pcapng: %s", sl->dir, strerror(errno));
		rte_ring_free(sl->ring);
		return -1;
	}
	state_write(sl, "running");
	__atomic_store_n(&cs->state, SBX_CAP_RUNNING, __ATOMIC_RELEASE);
	if (pthread_create(&sl->tid, NULL, slot_writer, sl) != 0) {
		snprintf(err, errlen, "mirrors[%u].destination.recorder: cannot start its writer thread", idx);
		close(sl->fd);
		sl->fd = -1;
		rte_ring_free(sl->ring);
		memset(cs, 0, sizeof(*cs));
		return -1;
	}
	sl->used = true;
	sbx_event(rec.p, "capture_start", -1, 0, "capture %u into %s", mc->id, sl->dir);
	return 0;
}

/* The slot of capture @p id, NULL when none. */
static struct rec_slot *slot_of(uint16_t id)
{
	unsigned int k;

	for (k = 0; k < SBX_CAPTURE_SLOTS; k++)
		if (rec.s[k].used && rec.s[k].mc.id == id)
			return &rec.s[k];
	return NULL;
}

int sbx_recorder_add(const struct sbx_config *n, char *err, size_t errlen)
{
	uint16_t i;
	int rc = 0;

	pthread_mutex_lock(&rec.lock);
	for (i = 0; i < n->nb_mirrors && rc == 0; i++)
		if (n->mirrors[i].dst_kind == SBX_DST_RECORDER && slot_of(n->mirrors[i].id) == NULL)
			rc = capture_start(&n->mirrors[i], i, err, errlen);
	pthread_mutex_unlock(&rec.lock);
	return rc;
}

/* Free slot @p sl: its writer stopped (joined: a write of its own that blocks is waited for), the
 * capture ended (reason @p why), its ring drained and freed. */
static void slot_free(struct rec_slot *sl, const char *why)
{
	struct rte_mbuf *pkts[REC_BURST];
	unsigned int n;

	sl->quit = true;
	pthread_join(sl->tid, NULL);

	while ((n = rte_ring_sc_dequeue_burst(sl->ring, (void **)pkts, REC_BURST, NULL)) > 0) {
		if (slot_shm(sl)->state == SBX_CAP_RUNNING)
			write_packets(sl, pkts, n);
		else
			rte_pktmbuf_free_bulk(pkts, n);
	}
	capture_end(sl, why);
	rte_ring_free(sl->ring);
	sl->ring = NULL;
	sl->used = false;
	memset(slot_shm(sl), 0, sizeof(*slot_shm(sl)));
}

void sbx_recorder_prune(const struct sbx_config *n)
{
	unsigned int k;
	uint16_t i;

	pthread_mutex_lock(&rec.lock);
	for (k = 0; k < SBX_CAPTURE_SLOTS; k++) {
		bool live = false;

		if (!rec.s[k].used)
			continue;
		for (i = 0; i < n->nb_mirrors; i++)
			live |= n->mirrors[i].dst_kind == SBX_DST_RECORDER && n->mirrors[i].id == rec.s[k].mc.id;
		if (!live)
			slot_free(&rec.s[k], "deleted");
	}
	pthread_mutex_unlock(&rec.lock);
}

int sbx_recorder_init(struct sbx_primary *p)
{
	rec.p = p;
	rec.started = true;
	return 0;
}

void sbx_recorder_fini(void)
{
	unsigned int k;

	if (!rec.started)
		return;
	rec.started = false;
	pthread_mutex_lock(&rec.lock);
	for (k = 0; k < SBX_CAPTURE_SLOTS; k++)
		if (rec.s[k].used)
			slot_free(&rec.s[k], "primary stopped");
	pthread_mutex_unlock(&rec.lock);
}
