/*
 * store.c: a capture's handles, events, names and counts, taken from
 * memory set aside at creation so that many threads can record at once
 * without allocating or locking per scope, and the map from a command
 * buffer to the handle that recorded it in the capture.
 */
#include "capture_internal.h"

#include <string.h>

enum crumbs_result store_init(crumbs_context *ctx)
{
	ctx->handles = ctx_alloc(ctx, sizeof(*ctx->handles) * ctx->max_command_buffers);
	ctx->label_handles = ctx->mirror_labels ?
		ctx_alloc(ctx, sizeof(*ctx->label_handles) * ctx->max_command_buffers) : NULL;
	uint64_t events = (uint64_t)ctx->max_scopes * 2 * (ctx->queue_count ? ctx->queue_count : 1);
	ctx->block_count = (uint32_t)(events / EVENTS_PER_BLOCK) + ctx->max_command_buffers;
	ctx->blocks = ctx_alloc(ctx, sizeof(*ctx->blocks) * ctx->block_count);
	ctx->names = ctx_alloc(ctx, ctx->name_bytes);
	ctx->counts_cap = ctx->max_scopes * 2;
	ctx->counts = ctx_alloc(ctx, sizeof(*ctx->counts) * ctx->counts_cap);
	ctx->map_cap = 1;
	while (ctx->map_cap < ctx->max_command_buffers * 2)
		ctx->map_cap *= 2;
	ctx->map_keys = ctx_alloc(ctx, sizeof(*ctx->map_keys) * ctx->map_cap);
	ctx->map_values = ctx_alloc(ctx, sizeof(*ctx->map_values) * ctx->map_cap);
	if (!ctx->handles || (ctx->mirror_labels && !ctx->label_handles) || !ctx->blocks ||
	    !ctx->names || !ctx->counts || !ctx->map_keys || !ctx->map_values)
		return CRUMBS_ERROR_OUT_OF_MEMORY;
	if (pthread_mutex_init(&ctx->map_lock, NULL) != 0)
		return CRUMBS_ERROR_OUT_OF_MEMORY;
	ctx->map_lock_ready = true;
	return CRUMBS_OK;
}

/* Whatever store_init reached. */
void store_release(crumbs_context *ctx)
{
	if (ctx->map_lock_ready)
		pthread_mutex_destroy(&ctx->map_lock);
	ctx_free(ctx, ctx->handles);
	ctx_free(ctx, ctx->label_handles);
	ctx_free(ctx, ctx->blocks);
	ctx_free(ctx, ctx->names);
	ctx_free(ctx, ctx->counts);
	ctx_free(ctx, ctx->map_keys);
	ctx_free(ctx, ctx->map_values);
}

void store_reset(crumbs_context *ctx)
{
	atomic_store(&ctx->block_next, 0);
	atomic_store(&ctx->name_next, 0);
	atomic_store(&ctx->counts_next, 0);
	atomic_store(&ctx->dropped, 0);
	/* Only the entries the last capture's handles made: the rest of
	 * the map (tens of KiB) is empty already. */
	uint32_t used = atomic_exchange(&ctx->handle_next, 0);
	if (used > ctx->max_command_buffers)
		used = ctx->max_command_buffers;
	pthread_mutex_lock(&ctx->map_lock);
	for (uint32_t i = 0; i < used; i++)
		if (ctx->handles[i].map_slot)
			ctx->map_keys[ctx->handles[i].map_slot - 1] = VK_NULL_HANDLE;
	pthread_mutex_unlock(&ctx->map_lock);
}

/* ------------------------------------------------------------------------ */
/* Handles                                                                  */
/* ------------------------------------------------------------------------ */

struct crumbs_cmd *store_handle(crumbs_context *ctx, struct queue_state *q)
{
	uint32_t i = atomic_fetch_add(&ctx->handle_next, 1);
	if (i >= ctx->max_command_buffers) {
		atomic_fetch_add(&ctx->dropped, 1);
		return NULL;
	}
	struct crumbs_cmd *h = &ctx->handles[i];
	memset(h, 0, sizeof(*h));
	h->state.detail = CRUMBS_DETAIL_MAX;
	h->ctx = ctx;
	h->kind = HANDLE_CAPTURE;
	h->queue = (uint32_t)(q - ctx->queues);
	return h;
}

struct crumbs_cmd *store_label_handle(crumbs_context *ctx, struct queue_state *q)
{
	/* A ring: a label handle is only needed while its command buffer
	 * is recorded, long before the ring comes round. */
	uint32_t i = atomic_fetch_add(&ctx->label_next, 1) % ctx->max_command_buffers;
	struct crumbs_cmd *h = &ctx->label_handles[i];
	memset(h, 0, sizeof(*h));
	h->kind = HANDLE_LABELS;
	h->state.detail = ctx->mirror_labels - 1;
	h->ctx = ctx;
	h->queue = (uint32_t)(q - ctx->queues);
	return h;
}

/* ------------------------------------------------------------------------ */
/* Events, names, counts                                                    */
/* ------------------------------------------------------------------------ */

struct event *store_event(struct crumbs_cmd *cmd)
{
	crumbs_context *ctx = cmd->ctx;
	struct event_block *b = cmd->last;
	if (!b || b->count == EVENTS_PER_BLOCK) {
		uint32_t i = atomic_fetch_add(&ctx->block_next, 1);
		if (i >= ctx->block_count)
			return NULL;
		struct event_block *nb = &ctx->blocks[i];
		nb->next = NULL;
		nb->count = 0;
		if (b)
			b->next = nb;
		else
			cmd->first = nb;
		cmd->last = b = nb;
	}
	return &b->events[b->count++];
}

void store_name(crumbs_context *ctx, struct name_ref *ref, const char *name, size_t len)
{
	if (len > 4096)
		len = 4096;
	if (!len) {
		*ref = (struct name_ref){ 0, 0 };
		return;
	}
	uint32_t at = atomic_fetch_add(&ctx->name_next, (uint32_t)len);
	if ((uint64_t)at + len > ctx->name_bytes) {
		*ref = (struct name_ref){ 0, 0 }; /* out of room: the name is lost, not the scope */
		return;
	}
	memcpy(ctx->names + at, name, len);
	*ref = (struct name_ref){ at, (uint32_t)len };
}

uint32_t store_counts(crumbs_context *ctx, const struct counts_record *c)
{
	uint32_t i = atomic_fetch_add(&ctx->counts_next, 1);
	if (i >= ctx->counts_cap)
		return UINT32_MAX;
	ctx->counts[i] = *c;
	return i;
}

/* ------------------------------------------------------------------------ */
/* Command buffer -> handle                                                 */
/* ------------------------------------------------------------------------ */

static uint32_t map_hash(VkCommandBuffer cb, uint32_t cap)
{
	uint64_t x = (uint64_t)(uintptr_t)cb;
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return (uint32_t)x & (cap - 1);
}

/* A command buffer recorded again in the same capture keeps its latest
 * recording: a submission took what it needed when it was made. */
void store_map_put(crumbs_context *ctx, struct crumbs_cmd *cmd)
{
	pthread_mutex_lock(&ctx->map_lock);
	uint32_t i = map_hash(cmd->cb, ctx->map_cap);
	for (uint32_t n = 0; n < ctx->map_cap; n++, i = (i + 1) & (ctx->map_cap - 1)) {
		if (ctx->map_keys[i] == VK_NULL_HANDLE || ctx->map_keys[i] == cmd->cb) {
			ctx->map_keys[i] = cmd->cb;
			ctx->map_values[i] = cmd;
			cmd->map_slot = i + 1;
			break;
		}
	}
	pthread_mutex_unlock(&ctx->map_lock);
}

struct crumbs_cmd *store_map_find(crumbs_context *ctx, VkCommandBuffer cb)
{
	struct crumbs_cmd *found = NULL;
	pthread_mutex_lock(&ctx->map_lock);
	uint32_t i = map_hash(cb, ctx->map_cap);
	for (uint32_t n = 0; n < ctx->map_cap; n++, i = (i + 1) & (ctx->map_cap - 1)) {
		if (ctx->map_keys[i] == VK_NULL_HANDLE)
			break;
		if (ctx->map_keys[i] == cb) {
			found = ctx->map_values[i];
			break;
		}
	}
	pthread_mutex_unlock(&ctx->map_lock);
	return found;
}
