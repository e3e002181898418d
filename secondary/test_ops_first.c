/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Linked only into spanbox-worker-ops-test (secondary/meson.build), never installed: one more
 * mempool driver, registered by a constructor like every DPDK mempool driver
 * (RTE_MEMPOOL_REGISTER_OPS), so that this binary's rte_mempool_ops_table differs from the
 * primary's, as it does between binaries linked differently (DPDK bug 1073: a pool's ops_index
 * then names another driver in the secondary). tests/e2e/92_upgrade.sh checks that an upgrade to
 * it is refused before it touches a pool (shared/abi.c). Its callbacks are never called.
 */
#include <errno.h>

#include <rte_mempool.h>

static int no_alloc(struct rte_mempool *mp)
{
	(void)mp;
	return -ENOTSUP;
}

static void no_free(struct rte_mempool *mp)
{
	(void)mp;
}

static int no_enqueue(struct rte_mempool *mp, void *const *objs, unsigned int n)
{
	(void)mp, (void)objs, (void)n;
	return -ENOTSUP;
}

static int no_dequeue(struct rte_mempool *mp, void **objs, unsigned int n)
{
	(void)mp, (void)objs, (void)n;
	return -ENOTSUP;
}

static unsigned int no_count(const struct rte_mempool *mp)
{
	(void)mp;
	return 0;
}

static const struct rte_mempool_ops sbx_test_ops = {
	.name = "sbx_test_extra",
	.alloc = no_alloc,
	.free = no_free,
	.enqueue = no_enqueue,
	.dequeue = no_dequeue,
	.get_count = no_count,
};

RTE_MEMPOOL_REGISTER_OPS(sbx_test_ops);
