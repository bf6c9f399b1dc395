/* SPDX-License-Identifier: MIT */
/*
 * kgc_io_prep_sendmsg / kgc_io_prep_recvmsg over loopback UDP: a datagram
 * gathered from two arrays (sendmsg to an address the caller overwrites
 * right after the prep: copied) lands scattered in two arrays of the other
 * socket (recvmsg, posted first, in flight across a young and a full
 * collection with its arrays only held by the ring); the sender's address
 * comes back in the caller's struct. The bytes are exactly the two source
 * ranges, the arrays kept their prep-time addresses until the reap
 * returned. Bad arguments: no or too many buffers, a destination length
 * over sizeof(struct sockaddr_storage), a length with a NULL address:
 * -EINVAL, nothing queued.
 */
#include <netinet/in.h>
#include <sys/socket.h>
#include "io_test.h"

#define A 700u
#define B 500u

static void prep_send(kgc_io_ring *r, kgc_thread *t, int fd, struct kgc_io_buf *v,
		      const struct sockaddr_in *to)
{
	struct sockaddr_in tmp = *to;

	T_ASSERT_EQ(kgc_io_prep_sendmsg(r, t, fd, v, 2, (struct sockaddr *)&tmp, sizeof(tmp), 0, 2), 0);
	explicit_bzero(&tmp, sizeof(tmp));
}

int main(void)
{
	kgc_heap *h = t_heap(64, 4, NULL);
	kgc_thread *t;
	kgc_io_ring *r;
	kgc_obj roots[4] = { 0 }, at[4];
	struct kgc_frame f;
	struct kgc_io_cqe c[2];
	struct kgc_io_buf sv[2], rv[2], many[KGC_IO_IOV_MAX + 1];
	struct sockaddr_in ra = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct sockaddr_in sa = ra;
	struct sockaddr_storage from;
	socklen_t alen = sizeof(ra);
	int rfd, sfd, p[2];

	alarm(20);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	r = t_ring(t, 4);
	T_ASSERT_EQ(pipe(p), 0);
	kgc_frame_push(t, &f, roots, 4, NULL);
	rfd = socket(AF_INET, SOCK_DGRAM, 0);
	sfd = socket(AF_INET, SOCK_DGRAM, 0);
	T_ASSERT(rfd >= 0 && sfd >= 0);
	T_ASSERT_EQ(bind(rfd, (struct sockaddr *)&ra, sizeof(ra)), 0);
	T_ASSERT_EQ(getsockname(rfd, (struct sockaddr *)&ra, &alen), 0);
	T_ASSERT_EQ(bind(sfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	alen = sizeof(sa);
	T_ASSERT_EQ(getsockname(sfd, (struct sockaddr *)&sa, &alen), 0);
	for (int i = 0; i < 4; i++) {
		roots[i] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), 1000);
		T_ASSERT(roots[i]);
	}
	t_pat_fill(kgc_array_data(roots[0]), 1000, 1);
	t_pat_fill(kgc_array_data(roots[1]), 1000, 2);
	memset(kgc_array_data(roots[2]), 0xee, 1000);
	memset(kgc_array_data(roots[3]), 0xee, 1000);
	sv[0] = (struct kgc_io_buf){ &roots[0], 100, A };
	sv[1] = (struct kgc_io_buf){ &roots[1], 0, B };
	rv[0] = (struct kgc_io_buf){ &roots[2], 0, 600 };
	rv[1] = (struct kgc_io_buf){ &roots[3], 50, 900 };

	/* bad arguments */
	T_ASSERT_EQ(kgc_io_prep_recvmsg(r, t, rfd, rv, 0, NULL, 0, 9), -EINVAL);
	for (int i = 0; i <= KGC_IO_IOV_MAX; i++)
		many[i] = rv[0];
	T_ASSERT_EQ(kgc_io_prep_recvmsg(r, t, rfd, many, KGC_IO_IOV_MAX + 1, NULL, 0, 9), -EINVAL);
	T_ASSERT_EQ(kgc_io_prep_sendmsg(r, t, sfd, sv, 2, (struct sockaddr *)&ra,
					sizeof(struct sockaddr_storage) + 1, 0, 9), -EINVAL);
	T_ASSERT(strstr(kgc_last_error(), "tolen"));
	T_ASSERT_EQ(kgc_io_prep_sendmsg(r, t, sfd, sv, 2, NULL, sizeof(ra), 0, 9), -EINVAL);
	T_ASSERT_EQ(kgc_io_inflight(r), 0);

	/* recvmsg in flight across collections, its arrays only held by the ring */
	T_ASSERT_EQ(kgc_io_prep_recvmsg(r, t, rfd, rv, 2, &from, 0, 1), 0);
	T_ASSERT_EQ(kgc_io_submit(r, t), 1);
	at[2] = roots[2];
	at[3] = roots[3];
	roots[2] = roots[3] = NULL;
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);

	memset(&from, 0, sizeof(from));
	prep_send(r, t, sfd, sv, &ra);
	T_ASSERT_EQ(kgc_io_submit(r, t), 1);
	T_ASSERT_EQ(kgc_io_reap(r, t, c, 2, 2), 2);
	for (int i = 0; i < 2; i++)
		T_ASSERT_EQ(c[i].res, A + B);
	/* no safepoint since the reap: the arrays are where the prep found them */
	{
		const uint8_t *x = kgc_array_data(at[2]), *y = kgc_array_data(at[3]);

		for (size_t i = 0; i < 1000; i++) {
			size_t k = i < 600 ? i : 0;	/* datagram byte k in x */

			if (i < 600 && x[i] != t_pat(100 + k, 1))
				T_FAIL("first array byte %zu", i);
			if (i >= 600 && x[i] != 0xee)
				T_FAIL("first array byte %zu written", i);
		}
		for (size_t i = 0; i < 1000; i++) {
			size_t k = 600 + (i - 50);	/* datagram byte k in y */
			uint8_t want = i < 50 || k >= A + B ? 0xee :
				       k < A ? t_pat(100 + k, 1) : t_pat(k - A, 2);

			if (y[i] != want)
				T_FAIL("second array byte %zu: %#x, want %#x", i, y[i], want);
		}
	}
	T_ASSERT_EQ(from.ss_family, AF_INET);
	T_ASSERT_EQ(((struct sockaddr_in *)&from)->sin_port, sa.sin_port);
	T_ASSERT_EQ(t_stats(h).regions_pinned, 0);

	close(rfd);
	close(sfd);
	t_io_end(h, t, r, &f, p);
	return 0;
}
