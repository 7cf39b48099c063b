/* SPDX-License-Identifier: MIT */
/*
 * layer_record.c: the layer's command pools and buffers (which recording
 * each one makes: a capture's, a standing one, or none), the pipelines
 * and render pass objects whose state names and counts events, the object
 * names a program gives, and debug labels as scopes.
 */
#include "layer_internal.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Command pools, buffers and pipelines                                     */
/* ------------------------------------------------------------------------ */


VKAPI_ATTR VkResult VKAPI_CALL layer_CreateCommandPool(VkDevice device,
							       const VkCommandPoolCreateInfo *ci,
							       const VkAllocationCallbacks *alloc,
							       VkCommandPool *out)
{
	DEVICE_OF(device, VK_ERROR_INITIALIZATION_FAILED);
	VkResult r = FORWARD_RESULT(d, VK_ERROR_INITIALIZATION_FAILED, CreateCommandPool, device,
				    ci, alloc, out);
	if (r == VK_SUCCESS)
		handle_map_set(&d->pools, (uint64_t)*out, (void *)(uintptr_t)(ci->queueFamilyIndex + 1u));
	return r;
}

/*
 * Frees the standing recording of a command buffer that is recorded
 * again, reset or freed. One replaced within a few frames of its
 * recording says the program records every frame; after enough of those
 * the device makes no more, and its command buffers are timed in capture
 * frames only (layer/LAYER.md).
 */
#define RERECORD_FRAMES 4
#define RERECORD_LIMIT 16

static void standing_release(struct layer_device *d, struct cb_state *s)
{
	if (!s->standing)
		return;
	if (s->cmd == s->standing) {
		if (s->capturing)
			atomic_fetch_sub(&d->recording, 1);
		s->capturing = false;
		s->cmd = NULL;
	}
	if (s->standing_reused && atomic_load(&d->frames) - s->standing_frame < RERECORD_FRAMES &&
	    atomic_fetch_add(&d->rerecorded, 1) + 1 == RERECORD_LIMIT)
		atomic_store(&d->standing_off, true);
	s->standing_hint = standing_used(s->standing);
	standing_free(d->ctx, s->standing);
	s->standing = NULL;
	atomic_fetch_sub(&d->standing_live, 1);
}

VKAPI_ATTR VkResult VKAPI_CALL layer_AllocateCommandBuffers(VkDevice device,
								    const VkCommandBufferAllocateInfo *ai,
								    VkCommandBuffer *out)
{
	DEVICE_OF(device, VK_ERROR_INITIALIZATION_FAILED);
	VkResult r = FORWARD_RESULT(d, VK_ERROR_INITIALIZATION_FAILED, AllocateCommandBuffers,
				    device, ai, out);
	if (r != VK_SUCCESS)
		return r;
	uintptr_t family = (uintptr_t)handle_map_get(&d->pools, (uint64_t)ai->commandPool);
	for (uint32_t i = 0; i < ai->commandBufferCount; i++) {
		struct cb_state *s = handle_map_get(&d->cbs, (uint64_t)(uintptr_t)out[i]);
		if (!s) {
			s = calloc(1, sizeof(*s));
			if (!s)
				continue; /* this one is recorded unprofiled */
			handle_map_set(&d->cbs, (uint64_t)(uintptr_t)out[i], s);
		}
		standing_release(d, s); /* a handle the driver gave out again */
		s->family = family ? (uint32_t)(family - 1) : UINT32_MAX;
		s->pool = ai->commandPool;
		s->secondary = ai->level == VK_COMMAND_BUFFER_LEVEL_SECONDARY;
		s->cmd = NULL;
		s->capturing = false;
		s->standing_hint = 0;
	}
	return r;
}

/* The command buffers of a pool, when some have standing recordings. */
struct pool_walk {
	struct layer_device *d;
	VkCommandPool pool;
};

static void release_in_pool(void *value, void *arg)
{
	struct cb_state *s = value;
	struct pool_walk *w = arg;
	if (s->pool == w->pool && s->standing)
		standing_release(w->d, s);
}

static void release_pool(struct layer_device *d, VkCommandPool pool)
{
	if (!d->ctx || !atomic_load(&d->standing_live))
		return;
	struct pool_walk w = { d, pool };
	handle_map_each(&d->cbs, release_in_pool, &w);
}

VKAPI_ATTR void VKAPI_CALL layer_FreeCommandBuffers(VkDevice device, VkCommandPool pool,
							   uint32_t count, const VkCommandBuffer *cbs)
{
	DEVICE_OF(device, );
	for (uint32_t i = 0; d->ctx && cbs && i < count; i++) {
		struct cb_state *s = cbs[i] ? handle_map_get(&d->cbs, (uint64_t)(uintptr_t)cbs[i]) : NULL;
		if (s)
			standing_release(d, s);
	}
	FORWARD(d, FreeCommandBuffers, device, pool, count, cbs);
}

VKAPI_ATTR VkResult VKAPI_CALL layer_ResetCommandBuffer(VkCommandBuffer cb,
								VkCommandBufferResetFlags flags)
{
	DEVICE_OF(cb, VK_ERROR_INITIALIZATION_FAILED);
	struct cb_state *s = d->ctx ? handle_map_get(&d->cbs, (uint64_t)(uintptr_t)cb) : NULL;
	if (s)
		standing_release(d, s);
	return FORWARD_RESULT(d, VK_ERROR_INITIALIZATION_FAILED, ResetCommandBuffer, cb, flags);
}

VKAPI_ATTR VkResult VKAPI_CALL layer_ResetCommandPool(VkDevice device, VkCommandPool pool,
							      VkCommandPoolResetFlags flags)
{
	DEVICE_OF(device, VK_ERROR_INITIALIZATION_FAILED);
	release_pool(d, pool);
	return FORWARD_RESULT(d, VK_ERROR_INITIALIZATION_FAILED, ResetCommandPool, device, pool,
			      flags);
}

VKAPI_ATTR void VKAPI_CALL layer_DestroyCommandPool(VkDevice device, VkCommandPool pool,
							   const VkAllocationCallbacks *alloc)
{
	DEVICE_OF(device, );
	release_pool(d, pool);
	FORWARD(d, DestroyCommandPool, device, pool, alloc);
}

static VkQueue queue_for_family(const struct layer_device *d, uint32_t family)
{
	for (uint32_t i = 0; i < d->queue_count; i++)
		if (d->queues[i].family == family)
			return d->queues[i].queue;
	return VK_NULL_HANDLE;
}

VKAPI_ATTR VkResult VKAPI_CALL layer_BeginCommandBuffer(VkCommandBuffer cb,
								const VkCommandBufferBeginInfo *bi)
{
	DEVICE_OF(cb, VK_ERROR_INITIALIZATION_FAILED);
	VkResult r = FORWARD_RESULT(d, VK_ERROR_INITIALIZATION_FAILED, BeginCommandBuffer, cb, bi);
	if (r != VK_SUCCESS || !d->ctx || !bi)
		return r;
	/* With windows, a command buffer begun after a window's end is
	 * recorded in the next window's frame (a capture frame, maybe): the
	 * frames that passed end first, as they would at its submission. */
	if (d->window_ns && atomic_load(&d->window_start_ns))
		window_advance(d);
	struct cb_state *s = handle_map_get(&d->cbs, (uint64_t)(uintptr_t)cb);
	if (!s)
		return r;
	if (s->capturing)
		atomic_fetch_sub(&d->recording, 1);
	s->capturing = false;
	s->cmd = NULL;
	standing_release(d, s);
	VkQueue queue = queue_for_family(d, s->family);
	/* One that may be submitted again without being recorded again
	 * records for every frame it may run in; so does one begun in the
	 * frame before a capture, which may be submitted in the capture, and
	 * one begun in a run, which may be submitted frames later, once its
	 * frame's share of the slots has been handed to another frame. */
	bool once = (bi->flags & VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT) != 0;
	bool reused = !once && !atomic_load(&d->standing_off);
	bool preroll = recorder_in_preroll(d->ctx);
	int run = recorder_run_detail(d->ctx);
	bool standing = d->standing && !s->secondary;
	if (standing && (reused || preroll || run >= 0) &&
	    (s->standing = standing_begin(d->ctx, cb, queue, s->standing_hint, once,
					  reused ? -1 : run)) != NULL) {
		s->cmd = s->standing;
		record_count(s->cmd);
		s->standing_reused = reused;
		s->standing_frame = atomic_load(&d->frames);
		atomic_fetch_add(&d->standing_live, 1);
	} else if (standing && run >= 0 && standing_queue(d->ctx, queue)) {
		/* No room for one: recorded in the frame's share, its
		 * timestamps could land in a later frame's. Its submission
		 * is timed, and the frame's note counts it. */
		s->cmd = NULL;
	} else {
		s->cmd = crumbs_cmd_begin(d->ctx, cb, queue);
	}
	s->capturing = s->cmd && record_full_detail(s->cmd);
	s->topology = VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST;
	s->view_mask = 0;
	for (int i = 0; i < 3; i++)
		s->pipeline[i][0] = '\0';
	if (s->capturing)
		atomic_fetch_add(&d->recording, 1);
	return r;
}

VKAPI_ATTR VkResult VKAPI_CALL layer_EndCommandBuffer(VkCommandBuffer cb)
{
	DEVICE_OF(cb, VK_ERROR_INITIALIZATION_FAILED);
	if (d->ctx) {
		struct cb_state *s = handle_map_get(&d->cbs, (uint64_t)(uintptr_t)cb);
		if (s && s->cmd) {
			crumbs_cmd_end(s->cmd);
			if (s->capturing)
				atomic_fetch_sub(&d->recording, 1);
			s->capturing = false;
		}
	}
	return FORWARD_RESULT(d, VK_ERROR_INITIALIZATION_FAILED, EndCommandBuffer, cb);
}

struct cb_state *capturing(struct layer_device *d, VkCommandBuffer cb)
{
	if (!atomic_load_explicit(&d->recording, memory_order_relaxed))
		return NULL;
	struct cb_state *s = handle_map_get(&d->cbs, (uint64_t)(uintptr_t)cb);
	return s && s->capturing && s->cmd ? s : NULL;
}

/*
 * The value of key in m: a block of `size` bytes, made (zeroed) when the
 * key has none, and reused when a handle comes back. NULL when out of
 * memory. Two objects of one handle are never made at once.
 */
static void *handle_map_block(struct handle_map *m, uint64_t key, size_t size)
{
	void *v = handle_map_get(m, key);
	if (v)
		return v;
	if (!(v = calloc(1, size)))
		return NULL;
	handle_map_set(m, key, v);
	if (handle_map_get(m, key) != v) { /* the map could not grow */
		free(v);
		return NULL;
	}
	return v;
}

/* Shader modules: the hash of their code, made once, for the identity of
 * the pipelines made of them (layer/pipeline_id.c). */
VKAPI_ATTR VkResult VKAPI_CALL layer_CreateShaderModule(VkDevice device,
								const VkShaderModuleCreateInfo *ci,
								const VkAllocationCallbacks *alloc,
								VkShaderModule *out)
{
	DEVICE_OF(device, VK_ERROR_INITIALIZATION_FAILED);
	VkResult r = FORWARD_RESULT(d, VK_ERROR_INITIALIZATION_FAILED, CreateShaderModule, device,
				    ci, alloc, out);
	if (r != VK_SUCCESS || !ci || !out || !*out)
		return r;
	uint64_t *hash = handle_map_block(&d->modules, (uint64_t)*out, sizeof(*hash));
	if (hash)
		*hash = shader_code_hash(ci->pCode, ci->codeSize);
	return r;
}

VKAPI_ATTR void VKAPI_CALL layer_DestroyShaderModule(VkDevice device, VkShaderModule module,
							    const VkAllocationCallbacks *alloc)
{
	DEVICE_OF(device, );
	free(handle_map_take(&d->modules, (uint64_t)module));
	FORWARD(d, DestroyShaderModule, device, module, alloc);
}

static uint64_t module_hash(void *user, VkShaderModule module)
{
	struct layer_device *d = user;
	const uint64_t *hash = handle_map_get(&d->modules, (uint64_t)module);
	return hash ? *hash : 0;
}

static const struct pipeline_info *library_info(void *user, VkPipeline library)
{
	struct layer_device *d = user;
	return handle_map_get(&d->pipelines, (uint64_t)library);
}

/* What a render pass draws to, for a pipeline made for it. */
static uint64_t pass_hash(void *user, VkRenderPass pass)
{
	struct layer_device *d = user;
	const struct pass_info *p = handle_map_get(&d->passes, (uint64_t)pass);
	if (!p)
		return 0;
	uint64_t h = pipeline_hash(UINT64_C(0x50415353), &p->multiview, sizeof(p->multiview));
	h = pipeline_hash(h, &p->subpasses, sizeof(p->subpasses));
	h = pipeline_hash(h, &p->colors, sizeof(p->colors));
	h = pipeline_hash(h, p->color_format, sizeof(p->color_format));
	return pipeline_hash(h, &p->depth_format, sizeof(p->depth_format)) | 1;
}

/* Keeps what a new pipeline's events are named and counted by. */
static void pipeline_keep(struct layer_device *d, VkPipeline p, const struct pipeline_info *info)
{
	struct pipeline_info *kept = handle_map_block(&d->pipelines, (uint64_t)p, sizeof(*kept));
	if (kept)
		*kept = *info;
}

VKAPI_ATTR VkResult VKAPI_CALL layer_CreateGraphicsPipelines(
	VkDevice device, VkPipelineCache cache, uint32_t count,
	const VkGraphicsPipelineCreateInfo *ci, const VkAllocationCallbacks *alloc, VkPipeline *out)
{
	DEVICE_OF(device, VK_ERROR_INITIALIZATION_FAILED);
	VkResult r = FORWARD_RESULT(d, VK_ERROR_INITIALIZATION_FAILED, CreateGraphicsPipelines,
				    device, cache, count, ci, alloc, out);
	const struct pipeline_lookup lk = { module_hash, library_info, pass_hash, d };
	for (uint32_t i = 0; r >= 0 && ci && out && i < count; i++) {
		if (!out[i])
			continue; /* VK_PIPELINE_COMPILE_REQUIRED */
		struct pipeline_info info;
		pipeline_info_graphics(&ci[i], &lk, &info);
		pipeline_keep(d, out[i], &info);
	}
	return r;
}

VKAPI_ATTR VkResult VKAPI_CALL layer_CreateComputePipelines(
	VkDevice device, VkPipelineCache cache, uint32_t count,
	const VkComputePipelineCreateInfo *ci, const VkAllocationCallbacks *alloc, VkPipeline *out)
{
	DEVICE_OF(device, VK_ERROR_INITIALIZATION_FAILED);
	VkResult r = FORWARD_RESULT(d, VK_ERROR_INITIALIZATION_FAILED, CreateComputePipelines,
				    device, cache, count, ci, alloc, out);
	const struct pipeline_lookup lk = { module_hash, library_info, pass_hash, d };
	for (uint32_t i = 0; r >= 0 && ci && out && i < count; i++) {
		if (!out[i])
			continue;
		struct pipeline_info info;
		pipeline_info_compute(&ci[i], &lk, &info);
		pipeline_keep(d, out[i], &info);
	}
	return r;
}

/* Objects whose names the layer keeps forget them when destroyed. */
#define DESTROY(name, type, handle_type)                                                       \
	VKAPI_ATTR void VKAPI_CALL layer_Destroy##name(VkDevice device, handle_type h,  \
							      const VkAllocationCallbacks *alloc) \
	{                                                                                      \
		DEVICE_OF(device, );                                                           \
		object_names_forget(&d->names, type, (uint64_t)h);                             \
		FORWARD(d, Destroy##name, device, h, alloc);                                   \
	}

/* The same for objects the layer keeps more of, in `map`: forgotten too,
 * so that programs that make them every frame do not grow the map, and a
 * handle that comes back as an object the layer does not see made (a
 * ray-tracing pipeline) has nothing left of the one before. */
#define DESTROY_KEPT(name, type, handle_type, map)                                             \
	VKAPI_ATTR void VKAPI_CALL layer_Destroy##name(VkDevice device, handle_type h,  \
							      const VkAllocationCallbacks *alloc) \
	{                                                                                      \
		DEVICE_OF(device, );                                                           \
		object_names_forget(&d->names, type, (uint64_t)h);                             \
		free(handle_map_take(&d->map, (uint64_t)h));                                   \
		FORWARD(d, Destroy##name, device, h, alloc);                                   \
	}

DESTROY_KEPT(Pipeline, VK_OBJECT_TYPE_PIPELINE, VkPipeline, pipelines)
DESTROY_KEPT(RenderPass, VK_OBJECT_TYPE_RENDER_PASS, VkRenderPass, passes)
DESTROY_KEPT(Framebuffer, VK_OBJECT_TYPE_FRAMEBUFFER, VkFramebuffer, framebuffers)
DESTROY_KEPT(ImageView, VK_OBJECT_TYPE_IMAGE_VIEW, VkImageView, views)
DESTROY(Image, VK_OBJECT_TYPE_IMAGE, VkImage)
DESTROY(Buffer, VK_OBJECT_TYPE_BUFFER, VkBuffer)

/* ------------------------------------------------------------------------ */
/* Object names                                                             */
/* ------------------------------------------------------------------------ */

/* Names are kept whether or not the program enabled the extension, and
 * passed on only where the next layer has the command. */
VKAPI_ATTR VkResult VKAPI_CALL layer_SetDebugUtilsObjectNameEXT(
	VkDevice device, const VkDebugUtilsObjectNameInfoEXT *info)
{
	DEVICE_OF(device, VK_SUCCESS);
	if (info)
		object_names_set(&d->names, info->objectType, info->objectHandle, info->pObjectName);
	return FORWARD_RESULT(d, VK_SUCCESS, SetDebugUtilsObjectNameEXT, device, info);
}

VKAPI_ATTR VkResult VKAPI_CALL layer_DebugMarkerSetObjectNameEXT(
	VkDevice device, const VkDebugMarkerObjectNameInfoEXT *info)
{
	DEVICE_OF(device, VK_SUCCESS);
	if (info)
		object_names_set(&d->names, object_type_of_report(info->objectType), info->object,
				 info->pObjectName);
	return FORWARD_RESULT(d, VK_SUCCESS, DebugMarkerSetObjectNameEXT, device, info);
}

/* Not kept; answered where the device lacks VK_EXT_debug_marker, which
 * the layer then offers itself. */
VKAPI_ATTR VkResult VKAPI_CALL layer_DebugMarkerSetObjectTagEXT(
	VkDevice device, const VkDebugMarkerObjectTagInfoEXT *info)
{
	DEVICE_OF(device, VK_SUCCESS);
	return FORWARD_RESULT(d, VK_SUCCESS, DebugMarkerSetObjectTagEXT, device, info);
}

/* ------------------------------------------------------------------------ */
/* Render pass objects                                                      */
/* ------------------------------------------------------------------------ */

/* Collects the attachments that subpasses write: color ones counted
 * once each (the first 64 by index; beyond that each reference counts),
 * the first PASS_COLORS_MAX kept with their formats, and the first
 * depth/stencil one. */
struct pass_count {
	uint64_t seen;
	struct pass_info *info;
	const VkFormat *formats;   /* by attachment, stride bytes apart */
	size_t stride;
	uint32_t attachments;
};

static VkFormat format_of(const struct pass_count *c, uint32_t attachment)
{
	if (attachment >= c->attachments || !c->formats)
		return VK_FORMAT_UNDEFINED;
	return *(const VkFormat *)(const void *)((const char *)c->formats + attachment * c->stride);
}

static void pass_color(struct pass_count *c, uint32_t attachment)
{
	if (attachment == VK_ATTACHMENT_UNUSED)
		return;
	if (attachment < 64) {
		if (c->seen & (1ull << attachment))
			return;
		c->seen |= 1ull << attachment;
	}
	struct pass_info *p = c->info;
	if (p->colors < PASS_COLORS_MAX) {
		p->color[p->colors] = attachment;
		p->color_format[p->colors] = format_of(c, attachment);
	}
	p->colors++;
}

static void pass_depth(struct pass_count *c, uint32_t attachment)
{
	if (attachment == VK_ATTACHMENT_UNUSED || c->info->depth != VK_ATTACHMENT_UNUSED)
		return;
	c->info->depth = attachment;
	c->info->depth_format = format_of(c, attachment);
}

/* A new render pass's info, empty; NULL when out of memory (its passes
 * are then named by their size alone). */
static struct pass_info *pass_new(struct layer_device *d, VkRenderPass pass, uint32_t subpasses)
{
	struct pass_info *p = handle_map_block(&d->passes, (uint64_t)pass, sizeof(*p));
	if (p) {
		memset(p, 0, sizeof(*p));
		p->subpasses = subpasses;
		p->depth = VK_ATTACHMENT_UNUSED;
	}
	return p;
}

VKAPI_ATTR VkResult VKAPI_CALL layer_CreateRenderPass(VkDevice device,
							      const VkRenderPassCreateInfo *ci,
							      const VkAllocationCallbacks *alloc,
							      VkRenderPass *out)
{
	DEVICE_OF(device, VK_ERROR_INITIALIZATION_FAILED);
	VkResult r = FORWARD_RESULT(d, VK_ERROR_INITIALIZATION_FAILED, CreateRenderPass, device,
				    ci, alloc, out);
	struct pass_info *p = r == VK_SUCCESS ? pass_new(d, *out, ci->subpassCount) : NULL;
	if (!p)
		return r;
	for (const VkBaseInStructure *n = ci->pNext; n; n = n->pNext)
		if (n->sType == VK_STRUCTURE_TYPE_RENDER_PASS_MULTIVIEW_CREATE_INFO) {
			const VkRenderPassMultiviewCreateInfo *m = (const void *)n;
			for (uint32_t i = 0; m->pViewMasks && i < m->subpassCount; i++)
				p->multiview |= m->pViewMasks[i] != 0;
		}
	struct pass_count c = { 0, p, ci->pAttachments ? &ci->pAttachments->format : NULL,
				sizeof(*ci->pAttachments), ci->attachmentCount };
	for (uint32_t i = 0; ci->pSubpasses && i < ci->subpassCount; i++) {
		const VkSubpassDescription *sp = &ci->pSubpasses[i];
		for (uint32_t k = 0; sp->pColorAttachments && k < sp->colorAttachmentCount; k++)
			pass_color(&c, sp->pColorAttachments[k].attachment);
		if (sp->pDepthStencilAttachment)
			pass_depth(&c, sp->pDepthStencilAttachment->attachment);
	}
	return r;
}

VKAPI_ATTR VkResult VKAPI_CALL layer_CreateRenderPass2(VkDevice device,
							       const VkRenderPassCreateInfo2 *ci,
							       const VkAllocationCallbacks *alloc,
							       VkRenderPass *out)
{
	DEVICE_OF(device, VK_ERROR_INITIALIZATION_FAILED);
	VkResult r = FORWARD_RESULT(d, VK_ERROR_INITIALIZATION_FAILED, CreateRenderPass2, device,
				    ci, alloc, out);
	struct pass_info *p = r == VK_SUCCESS ? pass_new(d, *out, ci->subpassCount) : NULL;
	if (!p)
		return r;
	struct pass_count c = { 0, p, ci->pAttachments ? &ci->pAttachments->format : NULL,
				sizeof(*ci->pAttachments), ci->attachmentCount };
	for (uint32_t i = 0; ci->pSubpasses && i < ci->subpassCount; i++) {
		const VkSubpassDescription2 *sp = &ci->pSubpasses[i];
		p->multiview |= sp->viewMask != 0;
		for (uint32_t k = 0; sp->pColorAttachments && k < sp->colorAttachmentCount; k++)
			pass_color(&c, sp->pColorAttachments[k].attachment);
		if (sp->pDepthStencilAttachment)
			pass_depth(&c, sp->pDepthStencilAttachment->attachment);
	}
	return r;
}

/* Framebuffers and image views: what a render pass draws into, whose
 * names and formats name it. */
VKAPI_ATTR VkResult VKAPI_CALL layer_CreateFramebuffer(VkDevice device,
							       const VkFramebufferCreateInfo *ci,
							       const VkAllocationCallbacks *alloc,
							       VkFramebuffer *out)
{
	DEVICE_OF(device, VK_ERROR_INITIALIZATION_FAILED);
	VkResult r = FORWARD_RESULT(d, VK_ERROR_INITIALIZATION_FAILED, CreateFramebuffer, device,
				    ci, alloc, out);
	struct framebuffer_info *f = r == VK_SUCCESS ?
		handle_map_block(&d->framebuffers, (uint64_t)*out, sizeof(*f)) : NULL;
	if (!f)
		return r;
	memset(f, 0, sizeof(*f));
	if (!(ci->flags & VK_FRAMEBUFFER_CREATE_IMAGELESS_BIT) && ci->pAttachments) {
		f->count = ci->attachmentCount < FRAMEBUFFER_VIEWS_MAX ? ci->attachmentCount :
									  FRAMEBUFFER_VIEWS_MAX;
		memcpy(f->views, ci->pAttachments, f->count * sizeof(*f->views));
	}
	return r;
}

VKAPI_ATTR VkResult VKAPI_CALL layer_CreateImageView(VkDevice device,
							     const VkImageViewCreateInfo *ci,
							     const VkAllocationCallbacks *alloc,
							     VkImageView *out)
{
	DEVICE_OF(device, VK_ERROR_INITIALIZATION_FAILED);
	VkResult r = FORWARD_RESULT(d, VK_ERROR_INITIALIZATION_FAILED, CreateImageView, device, ci,
				    alloc, out);
	struct view_info *v = r == VK_SUCCESS ?
		handle_map_block(&d->views, (uint64_t)*out, sizeof(*v)) : NULL;
	if (v)
		*v = (struct view_info){ ci->image, ci->format };
	return r;
}

VKAPI_ATTR void VKAPI_CALL layer_CmdBindPipeline(VkCommandBuffer cb,
							VkPipelineBindPoint point, VkPipeline p)
{
	DEVICE_OF(cb, );
	FORWARD(d, CmdBindPipeline, cb, point, p);
	struct cb_state *s = capturing(d, cb);
	if (!s)
		return;
	int i = point == VK_PIPELINE_BIND_POINT_GRAPHICS ? 0 :
		point == VK_PIPELINE_BIND_POINT_COMPUTE ? 1 :
		point == VK_PIPELINE_BIND_POINT_RAY_TRACING_KHR ? 2 : -1;
	if (i < 0)
		return;
	/* The program's name for it, else its identity. */
	const struct pipeline_info *info = handle_map_get(&d->pipelines, (uint64_t)p);
	if (!object_names_get(&d->names, VK_OBJECT_TYPE_PIPELINE, (uint64_t)p, s->pipeline[i],
			      sizeof(s->pipeline[i])))
		pipeline_label(info, s->pipeline[i], sizeof(s->pipeline[i]));
	if (i == 0 && info && info->topology)
		s->topology = (VkPrimitiveTopology)(info->topology - 1);
}

/* Shader objects bound in place of a pipeline: the layer does not know
 * them, so the draws and dispatches after them carry no pipeline's name
 * rather than the last pipeline's. */
VKAPI_ATTR void VKAPI_CALL layer_CmdBindShadersEXT(VkCommandBuffer cb, uint32_t count,
							  const VkShaderStageFlagBits *stages,
							  const VkShaderEXT *shaders)
{
	DEVICE_OF(cb, );
	FORWARD(d, CmdBindShadersEXT, cb, count, stages, shaders);
	struct cb_state *s = capturing(d, cb);
	for (uint32_t i = 0; s && stages && i < count; i++)
		s->pipeline[stages[i] == VK_SHADER_STAGE_COMPUTE_BIT ? 1 : 0][0] = '\0';
}

VKAPI_ATTR void VKAPI_CALL layer_CmdSetPrimitiveTopology(VkCommandBuffer cb,
								VkPrimitiveTopology t)
{
	DEVICE_OF(cb, );
	FORWARD(d, CmdSetPrimitiveTopology, cb, t);
	struct cb_state *s = capturing(d, cb);
	if (s)
		s->topology = t;
}

/* ------------------------------------------------------------------------ */
/* Labels                                                                   */
/* ------------------------------------------------------------------------ */

/* The state of cb while recorded, at any detail: for its labels (scopes
 * of level 0, kept at every detail level; crumbs_scope_begin leaves them
 * out where nothing is recorded) and the secondaries it executes, whose
 * labels come with them. */
struct cb_state *recording(struct layer_device *d, VkCommandBuffer cb)
{
	struct cb_state *s = handle_map_get(&d->cbs, (uint64_t)(uintptr_t)cb);
	return s && s->cmd ? s : NULL;
}

/* A label's name: real programs pass NULL too, which is an empty name. */
static void label_begin(struct layer_device *d, VkCommandBuffer cb, const char *name)
{
	struct cb_state *s = recording(d, cb);
	if (s)
		crumbs_scope_begin(s->cmd, 0, name ? name : "");
}

/* An end with nothing open on cb ends a label of an earlier command
 * buffer on the same queue, as debug utils allows; the recorder keeps it
 * (and the analyzer reports one that matches nothing). */
static void label_end(struct layer_device *d, VkCommandBuffer cb)
{
	struct cb_state *s = recording(d, cb);
	if (s)
		crumbs_scope_end(s->cmd);
}

VKAPI_ATTR void VKAPI_CALL layer_CmdBeginDebugUtilsLabelEXT(VkCommandBuffer cb,
								   const VkDebugUtilsLabelEXT *l)
{
	DEVICE_OF(cb, );
	FORWARD(d, CmdBeginDebugUtilsLabelEXT, cb, l);
	label_begin(d, cb, l ? l->pLabelName : NULL);
}

VKAPI_ATTR void VKAPI_CALL layer_CmdEndDebugUtilsLabelEXT(VkCommandBuffer cb)
{
	DEVICE_OF(cb, );
	FORWARD(d, CmdEndDebugUtilsLabelEXT, cb);
	label_end(d, cb);
}

/* An inserted label is a point in time: a scope that begins and ends
 * there. */
VKAPI_ATTR void VKAPI_CALL layer_CmdInsertDebugUtilsLabelEXT(VkCommandBuffer cb,
								    const VkDebugUtilsLabelEXT *l)
{
	DEVICE_OF(cb, );
	FORWARD(d, CmdInsertDebugUtilsLabelEXT, cb, l);
	label_begin(d, cb, l ? l->pLabelName : NULL);
	label_end(d, cb);
}

/* Queue labels wrap submissions: capture/submit.c places them. */
VKAPI_ATTR void VKAPI_CALL layer_QueueBeginDebugUtilsLabelEXT(VkQueue queue,
								     const VkDebugUtilsLabelEXT *l)
{
	DEVICE_OF(queue, );
	if (!d->ctx) {
		FORWARD(d, QueueBeginDebugUtilsLabelEXT, queue, l);
		return;
	}
	/* Queue calls, like submissions: not while a frame ends. */
	window_enter(d);
	FORWARD(d, QueueBeginDebugUtilsLabelEXT, queue, l);
	submit_queue_label(d->ctx, queue, l && l->pLabelName ? l->pLabelName : "");
	window_leave(d);
}

VKAPI_ATTR void VKAPI_CALL layer_QueueEndDebugUtilsLabelEXT(VkQueue queue)
{
	DEVICE_OF(queue, );
	if (!d->ctx) {
		FORWARD(d, QueueEndDebugUtilsLabelEXT, queue);
		return;
	}
	window_enter(d);
	FORWARD(d, QueueEndDebugUtilsLabelEXT, queue);
	submit_queue_label(d->ctx, queue, NULL);
	window_leave(d);
}

VKAPI_ATTR void VKAPI_CALL layer_QueueInsertDebugUtilsLabelEXT(VkQueue queue,
								      const VkDebugUtilsLabelEXT *l)
{
	DEVICE_OF(queue, );
	if (!d->ctx) {
		FORWARD(d, QueueInsertDebugUtilsLabelEXT, queue, l);
		return;
	}
	window_enter(d);
	FORWARD(d, QueueInsertDebugUtilsLabelEXT, queue, l);
	submit_queue_label(d->ctx, queue, l && l->pLabelName ? l->pLabelName : "");
	submit_queue_label(d->ctx, queue, NULL);
	window_leave(d);
}

VKAPI_ATTR void VKAPI_CALL layer_CmdDebugMarkerBeginEXT(VkCommandBuffer cb,
							       const VkDebugMarkerMarkerInfoEXT *m)
{
	DEVICE_OF(cb, );
	FORWARD(d, CmdDebugMarkerBeginEXT, cb, m);
	label_begin(d, cb, m ? m->pMarkerName : NULL);
}

VKAPI_ATTR void VKAPI_CALL layer_CmdDebugMarkerEndEXT(VkCommandBuffer cb)
{
	DEVICE_OF(cb, );
	FORWARD(d, CmdDebugMarkerEndEXT, cb);
	label_end(d, cb);
}

VKAPI_ATTR void VKAPI_CALL layer_CmdDebugMarkerInsertEXT(VkCommandBuffer cb,
								const VkDebugMarkerMarkerInfoEXT *m)
{
	DEVICE_OF(cb, );
	FORWARD(d, CmdDebugMarkerInsertEXT, cb, m);
	label_begin(d, cb, m ? m->pMarkerName : NULL);
	label_end(d, cb);
}

