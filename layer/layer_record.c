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
	 * frame before a capture, which may be submitted in the capture. */
	bool reused = !(bi->flags & VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT) &&
		      !atomic_load(&d->standing_off);
	bool preroll = recorder_in_preroll(d->ctx);
	if (d->standing && !s->secondary && (reused || preroll) &&
	    (s->standing = standing_begin(d->ctx, cb, queue, s->standing_hint)) != NULL) {
		s->cmd = s->standing;
		s->standing_reused = reused;
		s->standing_frame = atomic_load(&d->frames);
		atomic_fetch_add(&d->standing_live, 1);
	} else {
		s->cmd = crumbs_cmd_begin(d->ctx, cb, queue);
	}
	s->capturing = record_full_detail(s->cmd);
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

static uintptr_t pass_info(void *user, VkRenderPass pass)
{
	struct layer_device *d = user;
	return (uintptr_t)handle_map_get(&d->passes, (uint64_t)pass);
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
	const struct pipeline_lookup lk = { module_hash, library_info, pass_info, d };
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
	const struct pipeline_lookup lk = { module_hash, library_info, pass_info, d };
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

DESTROY(RenderPass, VK_OBJECT_TYPE_RENDER_PASS, VkRenderPass)
DESTROY(Framebuffer, VK_OBJECT_TYPE_FRAMEBUFFER, VkFramebuffer)
DESTROY(Image, VK_OBJECT_TYPE_IMAGE, VkImage)
DESTROY(ImageView, VK_OBJECT_TYPE_IMAGE_VIEW, VkImageView)
DESTROY(Buffer, VK_OBJECT_TYPE_BUFFER, VkBuffer)

/* A pipeline's info is forgotten too: its handle may come back as one
 * the layer does not hash (a ray-tracing pipeline). */
VKAPI_ATTR void VKAPI_CALL layer_DestroyPipeline(VkDevice device, VkPipeline p,
							const VkAllocationCallbacks *alloc)
{
	DEVICE_OF(device, );
	object_names_forget(&d->names, VK_OBJECT_TYPE_PIPELINE, (uint64_t)p);
	struct pipeline_info *info = p ? handle_map_get(&d->pipelines, (uint64_t)p) : NULL;
	if (info)
		memset(info, 0, sizeof(*info));
	FORWARD(d, DestroyPipeline, device, p, alloc);
}

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

static uintptr_t pass_pack(bool multiview, uint32_t colors, bool depth, bool stencil,
			   uint32_t subpasses)
{
	return PASS_KNOWN | (multiview ? PASS_MULTIVIEW : 0) | (depth ? PASS_DEPTH : 0) |
	       (stencil ? PASS_STENCIL : 0) | (uintptr_t)(colors > 255 ? 255 : colors) << PASS_COLORS_SHIFT |
	       (uintptr_t)(subpasses > 255 ? 255 : subpasses) << PASS_SUBPASSES_SHIFT;
}

static bool format_has_depth(VkFormat f)
{
	return f == VK_FORMAT_D16_UNORM || f == VK_FORMAT_X8_D24_UNORM_PACK32 ||
	       f == VK_FORMAT_D32_SFLOAT || f == VK_FORMAT_D16_UNORM_S8_UINT ||
	       f == VK_FORMAT_D24_UNORM_S8_UINT || f == VK_FORMAT_D32_SFLOAT_S8_UINT;
}

static bool format_has_stencil(VkFormat f)
{
	return f == VK_FORMAT_S8_UINT || f == VK_FORMAT_D16_UNORM_S8_UINT ||
	       f == VK_FORMAT_D24_UNORM_S8_UINT || f == VK_FORMAT_D32_SFLOAT_S8_UINT;
}

/* Collects the attachments of subpasses: `seen` marks color attachments
 * counted (the first 64; beyond that each reference counts). */
struct pass_count {
	uint64_t seen;
	uint32_t colors;
	bool depth, stencil;
};

static void pass_color(struct pass_count *c, uint32_t attachment)
{
	if (attachment == VK_ATTACHMENT_UNUSED)
		return;
	if (attachment < 64) {
		if (c->seen & (1ull << attachment))
			return;
		c->seen |= 1ull << attachment;
	}
	c->colors++;
}

static void pass_depth(struct pass_count *c, uint32_t attachment, VkFormat format)
{
	if (attachment == VK_ATTACHMENT_UNUSED)
		return;
	c->depth |= format_has_depth(format);
	c->stencil |= format_has_stencil(format);
}

VKAPI_ATTR VkResult VKAPI_CALL layer_CreateRenderPass(VkDevice device,
							      const VkRenderPassCreateInfo *ci,
							      const VkAllocationCallbacks *alloc,
							      VkRenderPass *out)
{
	DEVICE_OF(device, VK_ERROR_INITIALIZATION_FAILED);
	VkResult r = FORWARD_RESULT(d, VK_ERROR_INITIALIZATION_FAILED, CreateRenderPass, device,
				    ci, alloc, out);
	if (r != VK_SUCCESS)
		return r;
	bool multiview = false;
	for (const VkBaseInStructure *p = ci->pNext; p; p = p->pNext)
		if (p->sType == VK_STRUCTURE_TYPE_RENDER_PASS_MULTIVIEW_CREATE_INFO) {
			const VkRenderPassMultiviewCreateInfo *m = (const void *)p;
			for (uint32_t i = 0; m->pViewMasks && i < m->subpassCount; i++)
				multiview |= m->pViewMasks[i] != 0;
		}
	struct pass_count c = { 0, 0, false, false };
	for (uint32_t i = 0; ci->pSubpasses && i < ci->subpassCount; i++) {
		const VkSubpassDescription *sp = &ci->pSubpasses[i];
		for (uint32_t k = 0; sp->pColorAttachments && k < sp->colorAttachmentCount; k++)
			pass_color(&c, sp->pColorAttachments[k].attachment);
		uint32_t ds = sp->pDepthStencilAttachment ? sp->pDepthStencilAttachment->attachment :
							    VK_ATTACHMENT_UNUSED;
		if (ds < ci->attachmentCount && ci->pAttachments)
			pass_depth(&c, ds, ci->pAttachments[ds].format);
	}
	handle_map_set(&d->passes, (uint64_t)*out,
		 (void *)pass_pack(multiview, c.colors, c.depth, c.stencil, ci->subpassCount));
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
	if (r != VK_SUCCESS)
		return r;
	bool multiview = false;
	struct pass_count c = { 0, 0, false, false };
	for (uint32_t i = 0; ci->pSubpasses && i < ci->subpassCount; i++) {
		const VkSubpassDescription2 *sp = &ci->pSubpasses[i];
		multiview |= sp->viewMask != 0;
		for (uint32_t k = 0; sp->pColorAttachments && k < sp->colorAttachmentCount; k++)
			pass_color(&c, sp->pColorAttachments[k].attachment);
		uint32_t ds = sp->pDepthStencilAttachment ? sp->pDepthStencilAttachment->attachment :
							    VK_ATTACHMENT_UNUSED;
		if (ds < ci->attachmentCount && ci->pAttachments)
			pass_depth(&c, ds, ci->pAttachments[ds].format);
	}
	handle_map_set(&d->passes, (uint64_t)*out,
		 (void *)pass_pack(multiview, c.colors, c.depth, c.stencil, ci->subpassCount));
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

