/* SPDX-License-Identifier: MIT */
/*
 * kgc_io_prep_accept and kgc_io_prep_connect over loopback TCP, both on
 * one ring: the connect's address is copied at prep (the caller's copy is
 * zeroed before the submit), the accept completes with a new fd
 * (SOCK_CLOEXEC set), the connect with 0. Bytes then go both ways through
 * send/recv into arrays on the two sockets, with a young and a full
 * collection while the recv waits. Bad arguments: a NULL address, a length
 * of 0 or over sizeof(struct sockaddr_storage), accept flags other than
 * SOCK_NONBLOCK | SOCK_CLOEXEC: -EINVAL, nothing queued.
 */
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include "io_test.h"

#define LEN 3000u

/* Connect through a copy of a in this frame, zeroed after the prep. */
static void prep_connect(kgc_io_ring *r, kgc_thread *t, int fd, const struct sockaddr_in *a)
{
	struct sockaddr_in tmp = *a;

	T_ASSERT_EQ(kgc_io_prep_connect(r, t, fd, (struct sockaddr *)&tmp, sizeof(tmp), 2), 0);
	explicit_bzero(&tmp, sizeof(tmp));	/* (a memset the compiler cannot drop) */
}

int main(void)
{
	kgc_heap *h = t_heap(64, 4, NULL);
	kgc_thread *t;
	kgc_io_ring *r;
	kgc_obj roots[2] = { 0 };
	struct kgc_frame f;
	struct kgc_io_cqe c[2];
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	int lfd, cfd, sfd = -1, p[2];

	alarm(20);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	r = t_ring(t, 4);
	T_ASSERT_EQ(pipe(p), 0);
	kgc_frame_push(t, &f, roots, 2, NULL);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	cfd = socket(AF_INET, SOCK_STREAM, 0);
	T_ASSERT(lfd >= 0 && cfd >= 0);
	T_ASSERT_EQ(bind(lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	T_ASSERT_EQ(listen(lfd, 4), 0);
	T_ASSERT_EQ(getsockname(lfd, (struct sockaddr *)&a, &alen), 0);

	T_ASSERT_EQ(kgc_io_prep_connect(r, t, cfd, NULL, sizeof(a), 9), -EINVAL);
	T_ASSERT(strstr(kgc_last_error(), "NULL address"));
	T_ASSERT_EQ(kgc_io_prep_connect(r, t, cfd, (struct sockaddr *)&a, 0, 9), -EINVAL);
	T_ASSERT(strstr(kgc_last_error(), "addrlen 0"));
	T_ASSERT_EQ(kgc_io_prep_connect(r, t, cfd, (struct sockaddr *)&a,
					sizeof(struct sockaddr_storage) + 1, 9), -EINVAL);
	T_ASSERT_EQ(kgc_io_prep_accept(r, t, lfd, 1, 9), -EINVAL);
	T_ASSERT(strstr(kgc_last_error(), "flags 0x1"));
	T_ASSERT_EQ(kgc_io_inflight(r), 0);

	T_ASSERT_EQ(kgc_io_prep_accept(r, t, lfd, SOCK_CLOEXEC, 1), 0);
	prep_connect(r, t, cfd, &a);
	T_ASSERT_EQ(kgc_io_submit(r, t), 2);
	T_ASSERT_EQ(kgc_io_reap(r, t, c, 2, 2), 2);
	for (int i = 0; i < 2; i++) {
		if (c[i].user_data == 1) {
			T_ASSERT(c[i].res >= 0);
			sfd = c[i].res;
		} else {
			T_ASSERT_EQ(c[i].user_data, 2);
			T_ASSERT_EQ(c[i].res, 0);
		}
	}
	T_ASSERT(sfd >= 0);
	T_ASSERT(fcntl(sfd, F_GETFD) & FD_CLOEXEC);

	/* bytes both ways through arrays; collections while the recv waits */
	for (int i = 0; i < 2; i++) {
		roots[i] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), LEN);
		T_ASSERT(roots[i]);
	}
	t_pat_fill(kgc_array_data(roots[0]), LEN, 1);
	T_ASSERT_EQ(kgc_io_prep_recv(r, t, sfd, &roots[1], 0, LEN, MSG_WAITALL, 3), 0);
	T_ASSERT_EQ(kgc_io_submit(r, t), 1);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	T_ASSERT_EQ(kgc_io_prep_send(r, t, cfd, &roots[0], 0, LEN, 0, 4), 0);
	T_ASSERT_EQ(kgc_io_submit(r, t), 1);
	T_ASSERT_EQ(kgc_io_reap(r, t, c, 2, 2), 2);
	for (int i = 0; i < 2; i++)
		T_ASSERT_EQ(c[i].res, LEN);
	t_pat_check(kgc_array_data(roots[1]), LEN, 1);

	close(sfd);
	close(cfd);
	close(lfd);
	t_io_end(h, t, r, &f, p);
	return 0;
}
