/* SPDX-License-Identifier: MIT */
/*
 * The input format of the CM parser fuzzer (fuzz_cm.c), shared with its seed generator
 * (gen_cm_seeds.c): one selector byte, then the bytes that decoder is given.
 *
 *   FZ_CM_INFO     blue's info message, as recv_info() hands it to blue__cm_parse()
 *   FZ_CM_VERDICT  blue's verdict, as recv_verdict() hands it to blue__cm_verdict_parse()
 *   FZ_CM_PP       ibv_rc_pingpong's "LID:QPN:PSN:GID" message (blue_cm_pp_parse)
 *   FZ_CM_ALLOW    4 bytes claimed IPv4, 16 bytes TCP peer (IPv6 or IPv4-mapped), then
 *                  a BLUE_CM_ALLOW list (blue__cm_allow_match)
 *
 * The selector is taken modulo FZ_CM__MAX, so every input means something.
 */
#ifndef BLUE_TESTS_FUZZ_CM_H
#define BLUE_TESTS_FUZZ_CM_H

enum fz_cm_kind {
	FZ_CM_INFO = 0,
	FZ_CM_VERDICT = 1,
	FZ_CM_PP = 2,
	FZ_CM_ALLOW = 3,
	FZ_CM__MAX
};

#define FZ_CM_ALLOW_HDR	20	/* claimed IPv4 + peer address */

#endif /* BLUE_TESTS_FUZZ_CM_H */
