/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One step of an IPv6 extension-header walk (RFC 8200 section 4), shared by the flow hash
 * (shared/flowhash.c) and the map key extractor (shared/maprules.c), which handle the fragment
 * header (44) themselves: hop-by-hop (0), routing (43) and destination options (60) are
 * (length + 1) * 8 bytes, AH (51, RFC 4302) (length + 2) * 4 bytes.
 */
#ifndef SPANBOX_IP6WALK_H
#define SPANBOX_IP6WALK_H

#include <stdint.h>

/**
 * Skip the extension header @p *nh at offset @p *p of the frame @p f (@p len bytes readable).
 * @return 1: skipped (*nh its next header, *p past it; *p may now be past len); 0: *nh is not a
 *         header this skips (a fragment header, a transport protocol, ...); -1: the header's first
 *         2 bytes are not in the frame (nothing changed)
 */
static inline __attribute__((always_inline)) int sbx_ip6_ext_skip(const uint8_t *f, uint32_t len, uint8_t *nh,
								   uint32_t *p)
{
	uint32_t n;

	if (*nh != 0 && *nh != 43 && *nh != 60 && *nh != 51)
		return 0;
	if (len < *p + 2)
		return -1;
	n = *nh == 51 ? ((uint32_t)f[*p + 1] + 2) * 4 : ((uint32_t)f[*p + 1] + 1) * 8;
	*nh = f[*p];
	*p += n;
	return 1;
}

#endif
