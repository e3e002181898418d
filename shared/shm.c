/* SPDX-License-Identifier: BSD-3-Clause */
/* Attaching to the shared memzone and small helpers every process uses. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <rte_memzone.h>

#include "spanbox/shm.h"

const char *sbx_worker_state_name(uint32_t s)
{
	static const char *const names[] = {
		[SBX_W_STARTING] = "starting", [SBX_W_RUNNING] = "running",
		[SBX_W_DRAINING] = "draining", [SBX_W_STOPPED] = "stopped",
		[SBX_W_DEAD] = "dead",         [SBX_W_RESTARTING] = "restarting",
		[SBX_W_FAILED] = "failed",
	};
	return s < RTE_DIM(names) ? names[s] : "unknown";
}

const char *sbx_member_state_name(uint32_t s)
{
	static const char *const names[] = {
		[SBX_MEMBER_UP] = "up", [SBX_MEMBER_DOWN] = "down", [SBX_MEMBER_HOLDDOWN] = "holddown",
	};
	return s < RTE_DIM(names) ? names[s] : "unknown";
}

const char *sbx_member_reason_name(uint32_t r)
{
	return r == SBX_MEMBER_REASON_LINK ? "link down" : r == SBX_MEMBER_REASON_TX_REFUSED ? "tx refused" : "";
}

const char *sbx_standby_state_name(uint32_t s)
{
	static const char *const names[] = {
		[SBX_SB_NONE] = "none",         [SBX_SB_STARTING] = "starting", [SBX_SB_PARKED] = "parked",
		[SBX_SB_ASSIGNED] = "assigned", [SBX_SB_TAKEN] = "taken",       [SBX_SB_FAILED] = "failed",
	};
	return s < RTE_DIM(names) ? names[s] : "unknown";
}

const char *sbx_upgrade_state_name(uint32_t s)
{
	static const char *const names[] = {
		[SBX_UPG_NONE] = "none", [SBX_UPG_RUNNING] = "running", [SBX_UPG_DONE] = "done",
		[SBX_UPG_REFUSED] = "refused",
	};
	return s < RTE_DIM(names) ? names[s] : "unknown";
}

struct sbx_shm *sbx_shm_attach(char *err, size_t errlen)
{
	const struct rte_memzone *mz = rte_memzone_lookup(SBX_MEMZONE_NAME);
	struct sbx_shm *shm;

	if (mz == NULL) {
		snprintf(err, errlen, "memzone %s not found: is the primary running?", SBX_MEMZONE_NAME);
		return NULL;
	}
	shm = mz->addr;
	if (mz->len < sizeof(*shm) || shm->magic != SBX_SHM_MAGIC ||
	    shm->version != SBX_SHM_VERSION || shm->size != sizeof(*shm)) {
		snprintf(err, errlen,
			 "memzone %s: layout mismatch (magic %#llx version %u size %u, expected version %u size %zu)",
			 SBX_MEMZONE_NAME, (unsigned long long)shm->magic, shm->version, shm->size,
			 SBX_SHM_VERSION, sizeof(*shm));
		return NULL;
	}
	if (shm->layout.total_size > mz->len || shm->layout.worker_stride != sizeof(struct sbx_worker_shm) ||
	    shm->layout.mb_ring_stride != sizeof(struct sbx_mb_ring) ||
	    shm->layout.sender_stride != sizeof(struct sbx_tunnel_source)) {
		snprintf(err, errlen,
			 "memzone %s: regions do not fit (total %llu B in %zu B, worker slot %u B expected %zu, ring %u B expected %zu)",
			 SBX_MEMZONE_NAME, (unsigned long long)shm->layout.total_size, mz->len, shm->layout.worker_stride,
			 sizeof(struct sbx_worker_shm), shm->layout.mb_ring_stride, sizeof(struct sbx_mb_ring));
		return NULL;
	}
	return shm;
}

uint64_t sbx_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t sbx_realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

void sbx_pool_name(int socket_id, char *buf, size_t len)
{
	snprintf(buf, len, "sbx_pool_s%d", socket_id);
}

void sbx_pool_ind_name(int socket_id, char *buf, size_t len)
{
	snprintf(buf, len, "sbx_pool_ind_s%d", socket_id);
}

void sbx_runtime_dir(const char *prefix, char *buf, size_t len)
{
	const char *dir = "/var/run";

	if (getuid() != 0) { /* as DPDK's eal_create_runtime_dir() */
		dir = getenv("XDG_RUNTIME_DIR");
		if (dir == NULL)
			dir = "/tmp";
	}
	snprintf(buf, len, "%s/dpdk/%s", dir, prefix);
}

void sbx_attach_marker_path(const char *prefix, char *buf, size_t len)
{
	char dir[SBX_PATH_LEN + 64];

	sbx_runtime_dir(prefix, dir, sizeof(dir));
	snprintf(buf, len, "%s/spanbox_attachable", dir);
}

int sbx_attach_marker_pid(const char *prefix)
{
	char path[512];
	FILE *f;
	int pid = 0;

	sbx_attach_marker_path(prefix, path, sizeof(path));
	f = fopen(path, "r");
	if (f == NULL)
		return 0;
	if (fscanf(f, "%d", &pid) != 1 || pid < 0)
		pid = 0;
	fclose(f);
	return pid;
}
