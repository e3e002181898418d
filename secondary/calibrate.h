/* SPDX-License-Identifier: BSD-3-Clause */
/* spanbox-worker --calibrate (see calibrate.c). */
#ifndef SPANBOX_CALIBRATE_H
#define SPANBOX_CALIBRATE_H

/**
 * Measure copy vs share cost per frame size and print the recommended copy.threshold (bytes).
 * Starts its own EAL (--no-huge --no-shconf); call instead of the worker's rte_eal_init().
 * @param iters copies per measurement round. @return process exit code.
 */
int sbx_calibrate(const char *prog, unsigned int iters);

/**
 * spanbox-worker --calibrate --timestamps: cycles per mirror copy without a timestamp, with
 * arista64 and with metamako (issue #26), for 64, 512 and 1518 B frames, SPAN and ERSPAN II,
 * strategies copy and share: the worker's own sbx_mirror_copy_burst() in bursts of 32, freed;
 * prints a table. Starts its own EAL as sbx_calibrate(). @param iters copies per measurement
 * round. @return process exit code.
 */
int sbx_calibrate_timestamps(const char *prog, unsigned int iters);

/**
 * spanbox-worker --calibrate --cross-core: cycles per 64 B frame of a refcount update, an attached
 * indirect mbuf, the worker's share and its copy, each released on the same lcore or on a second
 * lcore on another CPU (the refcount cache line then moves between the two cores); prints a table.
 * Starts its own EAL on the first two CPUs of the process's affinity (lcores 0 and 1, --no-huge
 * --no-shconf); call instead of the worker's rte_eal_init().
 * @param frames frames per measurement round (rounded up to bursts of 32). @return process exit
 * code (1 with fewer than two CPUs).
 */
int sbx_calibrate_cross_core(const char *prog, unsigned int frames);

#endif
