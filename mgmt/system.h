/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the machine really does, as JSON (docs/DIAGNOSTICS.md "The appliance's own view"): NUMA
 * sockets, lcores, hugepages, placement warnings (GET /api/v1/system), a port's placement
 * (GET /api/v1/ports/{name}), a PCI device's decoded path (GET /api/v1/system/pci/{bdf}), the
 * pool plan and populate figures (in /pools), and the on-demand copy probe
 * (POST /api/v1/system/memprobe).
 */
#ifndef SBX_MGMT_SYSTEM_H
#define SBX_MGMT_SYSTEM_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "spanbox/shm.h"

/** Seconds between two runs of the copy probe (a run inside the window gets 429). */
#define MGMT_MEMPROBE_INTERVAL_S 30
/** A probe still running after this many seconds is killed (SIGKILL) and answered 504. */
#define MGMT_MEMPROBE_TIMEOUT_S 20

/**
 * The body of GET /api/v1/system: "sockets" (NUMA nodes, their CPUs and hugepages), "lcores"
 * (id, role, CPU set, socket), "hugepages" (per size and socket: total, free, surplus, pages
 * spanbox holds; the hugetlbfs mounts and the hugepage files of our prefix), "ports" and "pools"
 * (socket of each), "warnings". Host facts are read now from sysfs; the appliance's part comes
 * from the memzone.
 * @param shm  the memzone of a live primary, or NULL when the appliance is down (host facts only;
 *             the hugepage files of spanbox's prefix are then not looked for).
 * @return a new object the caller frees with cJSON_Delete(), NULL when out of memory.
 */
cJSON *mgmt_system_json(const struct sbx_shm *shm);

/**
 * The warnings the primary recorded at start: [{"kind": "numa", "message": "..."}...].
 * @return a new array (the caller frees it), NULL when out of memory.
 */
cJSON *mgmt_warnings_json(const struct sbx_shm *shm);

/**
 * Add to pool @p i's object @p po (mgmt_pool_json()) its "plan" (every term and the total,
 * mbufs), "size_source", "bytes", "hugepage_size_kb", "fresh_hugepage_bytes", the "hugepage_check"
 * figures, and "memset" (the first-touch bound: ms, bytes, ratio populate/memset; null when not
 * measured).
 */
void mgmt_pool_details_json(cJSON *po, const struct sbx_shm *shm, uint32_t i);

/**
 * Placement of port @p i: "socket" (planned with), "device_socket", "socket_source", the pool
 * serving it, the workers polling it (lcore, socket, queues), the warnings that name it, and for
 * a PCI port its decoded PCIe path ("pci": see mgmt_pci_json(); null for other ports).
 * Added to @p o.
 */
void mgmt_port_placement_json(cJSON *o, const struct sbx_shm *shm, uint16_t i);

/**
 * The decoded PCIe path of device @p bdf: {"bdf", "device": {...}, "bridges": [...],
 * "warnings": [...]} (the entries as spanbox-pcie --json prints them).
 * @param out  receives the object on 200.
 * @param err  receives the reason otherwise.
 * @return the HTTP status: 200; 400 when @p bdf is not DDDD:BB:DD.F; 404 when the device does not
 *         exist; 500 when it cannot be read (e.g. not root).
 */
unsigned int mgmt_pci_json(const char *bdf, cJSON **out, char *err, size_t errlen);

/**
 * Accept a copy-probe request: parse @p body (@p len bytes, may be empty: JSON object with
 * optional "size_mb" 1..1024 and "runs" 1..20) and apply the rate limit (one run per
 * MGMT_MEMPROBE_INTERVAL_S). On success the run is reserved; start it with mgmt_memprobe_launch().
 * @param retry_after  on 429, receives the seconds until the next run is allowed.
 * @return 0 when accepted; 400 (bad body, message in @p err) or 429 (message in @p err).
 */
unsigned int mgmt_memprobe_accept(const char *body, size_t len, unsigned int *retry_after, char *err,
				  size_t errlen);

/**
 * Run the accepted probe in a thread: fork/exec of spanbox-memprobe --json (beside this binary:
 * ../tools/spanbox-memprobe), killed after MGMT_MEMPROBE_TIMEOUT_S. @p done(@p arg) is called from
 * that thread when the result is ready (the probe lane of http.c waits for it: api_core.c).
 * @return 0, or -1 when the thread cannot be started (then @p done is not called).
 */
int mgmt_memprobe_launch(void (*done)(void *arg), void *arg);

/**
 * The result of the finished probe, taken once (ownership of *@p body passes to the caller).
 * @return the HTTP status: 200 with the probe's own JSON; 500 when it failed or printed no JSON,
 *         504 on timeout (then *@p body is NULL and @p err says why).
 */
unsigned int mgmt_memprobe_result(cJSON **body, char *err, size_t errlen);

/** Kill a running probe and wait for its thread (main, before mgmt_http_stop(): the probe lane's
 * job then ends at once). */
void mgmt_memprobe_shutdown(void);

#endif
