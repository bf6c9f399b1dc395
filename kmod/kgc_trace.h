/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kgc trace events (/sys/kernel/tracing/events/kgc/):
 *   kgc_pin_query      one PIN_QUERY: range, selected or all, pinned found
 *   kgc_uncommit_busy  an UNCOMMIT refused with -EBUSY: the region, pins
 *   kgc_watch_fire     a watched region's kernel pins are gone
 *   kgc_move           one REGION_MOVE: ranges, pages moved and copied, result
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM kgc

#if !defined(_KGC_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _KGC_TRACE_H

#include <linux/tracepoint.h>

TRACE_EVENT(kgc_pin_query,
	TP_PROTO(u32 heap, u32 first, u32 count, bool selected, u32 nr_pinned),
	TP_ARGS(heap, first, count, selected, nr_pinned),
	TP_STRUCT__entry(
		__field(u32, heap)
		__field(u32, first)
		__field(u32, count)
		__field(bool, selected)
		__field(u32, nr_pinned)
	),
	TP_fast_assign(
		__entry->heap = heap;
		__entry->first = first;
		__entry->count = count;
		__entry->selected = selected;
		__entry->nr_pinned = nr_pinned;
	),
	TP_printk("heap=%u first=%u count=%u selected=%d pinned=%u",
		  __entry->heap, __entry->first, __entry->count,
		  __entry->selected, __entry->nr_pinned)
);

TRACE_EVENT(kgc_uncommit_busy,
	TP_PROTO(u32 heap, u32 region, u32 user_pins, u32 kernel_pins),
	TP_ARGS(heap, region, user_pins, kernel_pins),
	TP_STRUCT__entry(
		__field(u32, heap)
		__field(u32, region)
		__field(u32, user_pins)
		__field(u32, kernel_pins)
	),
	TP_fast_assign(
		__entry->heap = heap;
		__entry->region = region;
		__entry->user_pins = user_pins;
		__entry->kernel_pins = kernel_pins;
	),
	TP_printk("heap=%u region=%u user_pins=%u kernel_pins=%u",
		  __entry->heap, __entry->region, __entry->user_pins,
		  __entry->kernel_pins)
);

TRACE_EVENT(kgc_watch_fire,
	TP_PROTO(u32 heap, u32 region, u32 nr_armed),
	TP_ARGS(heap, region, nr_armed),
	TP_STRUCT__entry(
		__field(u32, heap)
		__field(u32, region)
		__field(u32, nr_armed)
	),
	TP_fast_assign(
		__entry->heap = heap;
		__entry->region = region;
		__entry->nr_armed = nr_armed;
	),
	TP_printk("heap=%u region=%u armed=%u", __entry->heap,
		  __entry->region, __entry->nr_armed)
);

TRACE_EVENT(kgc_move,
	TP_PROTO(u32 heap, u32 src, u32 dst, u32 count, u32 moved, u32 copied,
		 int ret),
	TP_ARGS(heap, src, dst, count, moved, copied, ret),
	TP_STRUCT__entry(
		__field(u32, heap)
		__field(u32, src)
		__field(u32, dst)
		__field(u32, count)
		__field(u32, moved)
		__field(u32, copied)
		__field(int, ret)
	),
	TP_fast_assign(
		__entry->heap = heap;
		__entry->src = src;
		__entry->dst = dst;
		__entry->count = count;
		__entry->moved = moved;
		__entry->copied = copied;
		__entry->ret = ret;
	),
	TP_printk("heap=%u src=%u dst=%u count=%u moved=%u copied=%u ret=%d",
		  __entry->heap, __entry->src, __entry->dst, __entry->count,
		  __entry->moved, __entry->copied, __entry->ret)
);

#endif /* _KGC_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE kgc_trace
#include <trace/define_trace.h>
