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

#endif
