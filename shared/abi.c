/* SPDX-License-Identifier: BSD-3-Clause */
/* What a secondary must match (abi.h): published by the primary, checked by every worker. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_memzone.h>
#include <rte_mempool.h>

#include "spanbox/abi.h"

_Static_assert(RTE_MEMPOOL_MAX_OPS_IDX <= SBX_ABI_MAX_OPS, "the ABI memzone holds the whole ops table");
_Static_assert(RTE_MEMPOOL_OPS_NAMESIZE == SBX_ABI_OPS_NAMESIZE, "ops names fit");

/* "[a, b, c]" of @p n names of @p names (stride SBX_ABI_OPS_NAMESIZE) into @p buf. */
static void ops_list(char *buf, size_t len, const char (*names)[SBX_ABI_OPS_NAMESIZE], uint32_t n)
{
	size_t used = 0;
	uint32_t i;

	used += (size_t)snprintf(buf, len, "[");
	for (i = 0; i < n && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%.*s", i ? ", " : "", SBX_ABI_OPS_NAMESIZE, names[i]);
	if (used < len)
		snprintf(buf + used, len - used, "]");
}

/* This process's mempool ops table as names. @return the count. */
static uint32_t local_ops(char (*names)[SBX_ABI_OPS_NAMESIZE])
{
	uint32_t i, n = rte_mempool_ops_table.num_ops;

	if (n > SBX_ABI_MAX_OPS)
		n = SBX_ABI_MAX_OPS;
	memset(names, 0, SBX_ABI_MAX_OPS * SBX_ABI_OPS_NAMESIZE);
	for (i = 0; i < n; i++)
		snprintf(names[i], SBX_ABI_OPS_NAMESIZE, "%s", rte_mempool_ops_table.ops[i].name);
	return n;
}

int sbx_abi_publish(uint32_t shm_version)
{
	const struct rte_memzone *mz = rte_memzone_reserve(SBX_ABI_MEMZONE_NAME, sizeof(struct sbx_abi_shm),
							   SOCKET_ID_ANY, 0);
	struct sbx_abi_shm *a;

	if (mz == NULL) {
		fprintf(stderr, "spanbox-primary: cannot reserve memzone %s\n", SBX_ABI_MEMZONE_NAME);
		return -1;
	}
	a = mz->addr;
	memset(a, 0, sizeof(*a));
	a->shm_version = shm_version;
	a->nb_ops = local_ops(a->ops);
	__atomic_store_n(&a->magic, SBX_ABI_MAGIC, __ATOMIC_RELEASE);
	return 0;
}

const struct sbx_abi_shm *sbx_abi_lookup(void)
{
	const struct rte_memzone *mz = rte_memzone_lookup(SBX_ABI_MEMZONE_NAME);
	const struct sbx_abi_shm *a = mz ? mz->addr : NULL;

	if (a == NULL || mz->len < sizeof(*a) || __atomic_load_n(&a->magic, __ATOMIC_ACQUIRE) != SBX_ABI_MAGIC)
		return NULL;
	return a;
}

int sbx_abi_check(uint32_t my_version, char *err, size_t errlen)
{
	const struct rte_memzone *mz = rte_memzone_lookup(SBX_ABI_MEMZONE_NAME);
	struct sbx_abi_shm *a = mz ? mz->addr : NULL;
	char mine[SBX_ABI_MAX_OPS][SBX_ABI_OPS_NAMESIZE], l1[SBX_ABI_MAX_OPS * (SBX_ABI_OPS_NAMESIZE + 2) + 4],
		l2[sizeof(l1)];
	uint32_t n;

	if (sbx_abi_lookup() == NULL) {
		snprintf(err, errlen, "memzone %s not found: is the primary running?", SBX_ABI_MEMZONE_NAME);
		return -1;
	}
	n = local_ops(mine);
	if (a->shm_version != my_version) {
		snprintf(err, errlen, "memzone layout version: primary %u, this binary %u (SBX_SHM_VERSION): refusing "
			 "to touch any pool or queue", a->shm_version, my_version);
	} else if (a->nb_ops != n || memcmp(a->ops, mine, sizeof(mine)) != 0) {
		uint32_t i = 0;

		/* the whole tables to stderr (this process's log); the error, which travels to the
		 * API's answer, names the first entry that differs: a pool records an index */
		ops_list(l1, sizeof(l1), (const char (*)[SBX_ABI_OPS_NAMESIZE])a->ops, a->nb_ops);
		ops_list(l2, sizeof(l2), (const char (*)[SBX_ABI_OPS_NAMESIZE])mine, n);
		fprintf(stderr, "spanbox: mempool ops table of the primary %s, of this binary %s\n", l1, l2);
		while (i < a->nb_ops && i < n && strncmp(a->ops[i], mine[i], SBX_ABI_OPS_NAMESIZE) == 0)
			i++;
		snprintf(err, errlen, "mempool drivers (ops table order, DPDK bug 1073): primary %u drivers, this "
			 "binary %u; entry %u is %.*s in the primary, %.*s in this binary: refusing to touch any pool",
			 a->nb_ops, n, i, SBX_ABI_OPS_NAMESIZE, i < a->nb_ops ? a->ops[i] : "(none)",
			 SBX_ABI_OPS_NAMESIZE, i < n ? mine[i] : "(none)");
	} else {
		return 0;
	}
	snprintf(a->refusal, sizeof(a->refusal), "%s", err);
	__atomic_store_n(&a->refusal_pid, (int32_t)getpid(), __ATOMIC_RELEASE);
	return -1;
}
