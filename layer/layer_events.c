/* SPDX-License-Identifier: MIT */
/*
 * layer_events.c: what a command buffer records at full detail besides
 * labels: render passes as events holding what is recorded in them, and
 * draws, dispatches, ray tracing and transfers as leaf events between two
 * timestamps, with their counts, each named from what the program
 * recorded (layer/LAYER.md, "How events are named").
 */
#include "layer_internal.h"

#include <stdarg.h>
#include <stddef.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Names of events                                                          */
/* ------------------------------------------------------------------------ */

/* A render pass or leaf event's name, as RenderDoc's event browser would
 * show it: the command, its main parameters, and the name of what it
 * works with. Bounded: an object's name is at most OBJECT_NAME_MAX. */
#define EVENT_NAME_MAX 256

struct event_name {
	char text[EVENT_NAME_MAX];
	size_t len;
};

__attribute__((format(printf, 2, 3)))
static void name_add(struct event_name *n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	n->len += name_vformat(n->text + n->len, sizeof(n->text) - n->len, fmt, ap);
	va_end(ap);
}

/* " · NAME" when `name` is one. */
static void name_add_object(struct event_name *n, const char *name)
{
	if (name && *name)
		name_add(n, " \u00b7 %s", name);
}

static void name_add_named(struct event_name *n, struct layer_device *d, VkObjectType type,
			   uint64_t handle)
{
	char name[OBJECT_NAME_MAX + 1];
	if (object_names_get(&d->names, type, handle, name, sizeof(name)))
		name_add_object(n, name);
}

/* "N things", singular for one. */
static void name_add_count(struct event_name *n, uint64_t count, const char *one,
			   const char *many)
{
	name_add(n, " %llu %s", (unsigned long long)count, count == 1 ? one : many);
}

/* A byte count as people read it: 256 B, 64 KiB, 1.5 MiB. */
static void name_add_bytes(struct event_name *n, VkDeviceSize bytes)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB" };
	if (bytes == VK_WHOLE_SIZE) {
		name_add(n, " whole");
		return;
	}
	if (bytes < 1024) {
		name_add(n, " %llu B", (unsigned long long)bytes);
		return;
	}
	int u = 0;
	uint64_t scale = 1024;
	while (u < 3 && bytes >= scale * 1024) {
		scale *= 1024;
		u++;
	}
	uint64_t whole = bytes / scale;
	uint64_t tenth = (bytes % scale) * 10 / scale;
	if (tenth)
		name_add(n, " %llu.%llu %s", (unsigned long long)whole, (unsigned long long)tenth,
			 units[u]);
	else
		name_add(n, " %llu %s", (unsigned long long)whole, units[u]);
}

static void name_add_extent(struct event_name *n, uint32_t w, uint32_t h, uint32_t depth)
{
	if (depth > 1)
		name_add(n, " %ux%ux%u", w, h, depth);
	else
		name_add(n, " %ux%u", w, h);
}

/* " (N regions)" for more than one. */
static void name_add_regions(struct event_name *n, uint32_t regions)
{
	if (regions > 1)
		name_add(n, " (%u regions)", regions);
}

/* ------------------------------------------------------------------------ */
/* Render passes                                                            */
/* ------------------------------------------------------------------------ */

static void pass_begin(struct layer_device *d, struct cb_state *s, const struct event_name *n,
		       uint32_t view_mask, VkExtent2D area)
{
	record_pass_begin(s->cmd, CRUMBS_EVENT_RENDER_PASS, n->text, n->len);
	/* Pipeline statistics: the pass event's query ends before the pass
	 * begins, and the pass keeps its area. */
	crumbs_pass_edge(s->cmd, CRUMBS_PASS_BEGINNING, area.width, area.height);
	s->view_mask = view_mask;
	/* Inside a multiview pass a timestamp takes a query per view:
	 * what is recorded there is untimed. */
	record_untimed(s->cmd, view_mask != 0);
	(void)d;
}

static void pass_end(struct layer_device *d, VkCommandBuffer cb)
{
	struct cb_state *s = capturing(d, cb);
	if (s) {
		s->view_mask = 0;
		record_untimed(s->cmd, false);
		crumbs_scope_end(s->cmd);
		crumbs_pass_edge(s->cmd, CRUMBS_PASS_ENDED, 0, 0);
	}
}

/* Right after a pass began: its contents' queries begin, where they can:
 * not in a pass of secondaries (theirs count), nor in a multiview pass
 * or one of several subpasses, whose vkCmdNextSubpass the layer does not
 * see (their counts are unknown). */
static void pass_begun(struct layer_device *d, VkCommandBuffer cb, bool secondaries,
		       bool uncounted)
{
	struct cb_state *s = capturing(d, cb);
	if (s)
		crumbs_pass_edge(s->cmd, secondaries ? CRUMBS_PASS_BEGUN_SECONDARY :
					 uncounted || s->view_mask ? CRUMBS_PASS_BEGUN_MULTIVIEW :
					 CRUMBS_PASS_BEGUN, 0, 0);
}

/* Right before a pass ends: its contents' query ends inside it. */
static void pass_ending(struct layer_device *d, VkCommandBuffer cb)
{
	struct cb_state *s = capturing(d, cb);
	if (s)
		crumbs_pass_edge(s->cmd, CRUMBS_PASS_ENDING, 0, 0);
}

/* Whether a classic pass has more than one subpass. */
static bool subpasses(struct layer_device *d, const VkRenderPassBeginInfo *bi)
{
	const struct pass_info *info = bi ? handle_map_get(&d->passes, (uint64_t)bi->renderPass) :
					    NULL;
	return !info || info->subpasses > 1;
}

/* A format as graphics programmers write it; NULL for the rest. */
static const char *format_name(VkFormat f)
{
	switch (f) {
	case VK_FORMAT_R8_UNORM: return "r8";
	case VK_FORMAT_R8_UINT: return "r8ui";
	case VK_FORMAT_R8G8_UNORM: return "rg8";
	case VK_FORMAT_R8G8B8A8_UNORM: return "rgba8";
	case VK_FORMAT_R8G8B8A8_SNORM: return "rgba8 snorm";
	case VK_FORMAT_R8G8B8A8_SRGB: return "rgba8 srgb";
	case VK_FORMAT_R8G8B8A8_UINT: return "rgba8ui";
	case VK_FORMAT_B8G8R8A8_UNORM: return "bgra8";
	case VK_FORMAT_B8G8R8A8_SRGB: return "bgra8 srgb";
	case VK_FORMAT_A8B8G8R8_UNORM_PACK32: return "abgr8";
	case VK_FORMAT_A8B8G8R8_SRGB_PACK32: return "abgr8 srgb";
	case VK_FORMAT_A2B10G10R10_UNORM_PACK32: return "rgb10a2";
	case VK_FORMAT_A2R10G10B10_UNORM_PACK32: return "bgr10a2";
	case VK_FORMAT_B10G11R11_UFLOAT_PACK32: return "r11g11b10f";
	case VK_FORMAT_R16_UNORM: return "r16";
	case VK_FORMAT_R16_SFLOAT: return "r16f";
	case VK_FORMAT_R16_UINT: return "r16ui";
	case VK_FORMAT_R16G16_UNORM: return "rg16";
	case VK_FORMAT_R16G16_SFLOAT: return "rg16f";
	case VK_FORMAT_R16G16B16A16_UNORM: return "rgba16";
	case VK_FORMAT_R16G16B16A16_SFLOAT: return "rgba16f";
	case VK_FORMAT_R32_SFLOAT: return "r32f";
	case VK_FORMAT_R32_UINT: return "r32ui";
	case VK_FORMAT_R32G32_SFLOAT: return "rg32f";
	case VK_FORMAT_R32G32B32A32_SFLOAT: return "rgba32f";
	case VK_FORMAT_R32G32B32A32_UINT: return "rgba32ui";
	case VK_FORMAT_D16_UNORM: return "d16";
	case VK_FORMAT_X8_D24_UNORM_PACK32: return "d24";
	case VK_FORMAT_D32_SFLOAT: return "d32";
	case VK_FORMAT_S8_UINT: return "s8";
	case VK_FORMAT_D16_UNORM_S8_UINT: return "d16s8";
	case VK_FORMAT_D24_UNORM_S8_UINT: return "d24s8";
	case VK_FORMAT_D32_SFLOAT_S8_UINT: return "d32s8";
	default: return NULL;
	}
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

/* What a render pass draws to: its color attachments (the first
 * PASS_COLORS_MAX by format, VK_FORMAT_UNDEFINED where not known), its
 * depth and stencil, and its views by attachment, whose names name it. */
struct targets {
	uint32_t colors;
	VkFormat color[PASS_COLORS_MAX];
	bool depth, stencil;
	VkFormat depth_format;         /* of the depth (or stencil) attachment */
	uint32_t subpasses;
	bool multiview;
	VkImageView views[PASS_COLORS_MAX + 2]; /* the colors', depth's, stencil's */
	uint32_t view_count;
};

/* "(rgba8 + d32)", "(3x rgba8, r32f + d24s8, 3 subpasses)": what a pass
 * draws to, by format, alike ones counted; by kind where a format is not
 * known ("2 color + depth"). */
static void name_add_targets(struct event_name *n, const struct targets *t)
{
	name_add(n, " (");
	size_t start = n->len;
	bool named = t->colors <= PASS_COLORS_MAX;
	for (uint32_t i = 0; named && i < t->colors; i++)
		named = format_name(t->color[i]) != NULL;
	for (uint32_t i = 0; named && i < t->colors;) {
		uint32_t k = i + 1;
		while (k < t->colors && t->color[k] == t->color[i])
			k++;
		if (k - i > 1)
			name_add(n, "%s%ux %s", i ? ", " : "", k - i, format_name(t->color[i]));
		else
			name_add(n, "%s%s", i ? ", " : "", format_name(t->color[i]));
		i = k;
	}
	if (!named)
		name_add(n, "%u color", t->colors);
	if (t->depth || t->stencil) {
		const char *f = format_name(t->depth_format);
		name_add(n, "%s%s", n->len > start ? " + " : "",
			 f ? f : t->depth && t->stencil ? "depth/stencil" : t->depth ? "depth" : "stencil");
	}
	if (n->len == start)
		name_add(n, "no attachments");
	if (t->subpasses > 1)
		name_add(n, ", %u subpasses", t->subpasses);
	if (t->multiview)
		name_add(n, ", multiview");
	name_add(n, ")");
}

/* " · NAME": the name of the first attachment that has one, its view's or
 * else its image's. */
static void name_add_attachment(struct event_name *n, struct layer_device *d,
				const struct targets *t)
{
	char name[OBJECT_NAME_MAX + 1];
	for (uint32_t i = 0; i < t->view_count; i++) {
		if (!t->views[i])
			continue;
		if (object_names_get(&d->names, VK_OBJECT_TYPE_IMAGE_VIEW, (uint64_t)t->views[i], name,
				     sizeof(name))) {
			name_add_object(n, name);
			return;
		}
		const struct view_info *v = handle_map_get(&d->views, (uint64_t)t->views[i]);
		if (v && object_names_get(&d->names, VK_OBJECT_TYPE_IMAGE, (uint64_t)v->image, name,
					  sizeof(name))) {
			name_add_object(n, name);
			return;
		}
	}
}

/* The views of a classic pass's attachments, from its framebuffer or,
 * imageless, from its beginning. */
static void pass_views(struct layer_device *d, const VkRenderPassBeginInfo *bi,
		       const VkImageView **views, uint32_t *count)
{
	*views = NULL;
	*count = 0;
	for (const VkBaseInStructure *p = bi->pNext; p; p = p->pNext)
		if (p->sType == VK_STRUCTURE_TYPE_RENDER_PASS_ATTACHMENT_BEGIN_INFO) {
			const VkRenderPassAttachmentBeginInfo *a = (const void *)p;
			*views = a->pAttachments;
			*count = a->pAttachments ? a->attachmentCount : 0;
			return;
		}
	const struct framebuffer_info *f = handle_map_get(&d->framebuffers, (uint64_t)bi->framebuffer);
	if (f) {
		*views = f->views;
		*count = f->count;
	}
}

/* A classic pass: the program's name for its render pass, else for its
 * framebuffer, else its size and attachments and the name of the first
 * attachment that has one. */
static void classic_pass_begin(struct layer_device *d, VkCommandBuffer cb,
			       const VkRenderPassBeginInfo *bi)
{
	struct cb_state *s = capturing(d, cb);
	if (!s || !bi)
		return;
	const struct pass_info *info = handle_map_get(&d->passes, (uint64_t)bi->renderPass);
	struct event_name n = { "", 0 };
	char name[OBJECT_NAME_MAX + 1];
	if (object_names_get(&d->names, VK_OBJECT_TYPE_RENDER_PASS, (uint64_t)bi->renderPass,
			     name, sizeof(name)) ||
	    object_names_get(&d->names, VK_OBJECT_TYPE_FRAMEBUFFER, (uint64_t)bi->framebuffer,
			     name, sizeof(name))) {
		name_add(&n, "%s", name);
	} else {
		name_add(&n, "Render Pass");
		name_add_extent(&n, bi->renderArea.extent.width, bi->renderArea.extent.height, 1);
		if (info) {
			struct targets t = { .colors = info->colors, .subpasses = info->subpasses,
					     .multiview = info->multiview };
			const VkImageView *views;
			uint32_t count;
			pass_views(d, bi, &views, &count);
			for (uint32_t i = 0; i < info->colors && i < PASS_COLORS_MAX; i++) {
				t.color[i] = info->color_format[i];
				t.views[t.view_count++] = info->color[i] < count ? views[info->color[i]] :
										    VK_NULL_HANDLE;
			}
			if (info->depth != VK_ATTACHMENT_UNUSED) {
				t.depth = format_has_depth(info->depth_format);
				t.stencil = format_has_stencil(info->depth_format);
				t.depth_format = info->depth_format;
				t.views[t.view_count++] = info->depth < count ? views[info->depth] :
										VK_NULL_HANDLE;
			}
			name_add_targets(&n, &t);
			name_add_attachment(&n, d, &t);
		}
	}
	pass_begin(d, s, &n, info && info->multiview ? 1 : 0, bi->renderArea.extent);
}

VKAPI_ATTR void VKAPI_CALL layer_CmdBeginRenderPass(VkCommandBuffer cb,
							   const VkRenderPassBeginInfo *bi,
							   VkSubpassContents contents)
{
	DEVICE_OF(cb, );
	classic_pass_begin(d, cb, bi);
	FORWARD(d, CmdBeginRenderPass, cb, bi, contents);
	pass_begun(d, cb, contents == VK_SUBPASS_CONTENTS_SECONDARY_COMMAND_BUFFERS,
		   subpasses(d, bi));
}

VKAPI_ATTR void VKAPI_CALL layer_CmdBeginRenderPass2(VkCommandBuffer cb,
							    const VkRenderPassBeginInfo *bi,
							    const VkSubpassBeginInfo *si)
{
	DEVICE_OF(cb, );
	classic_pass_begin(d, cb, bi);
	FORWARD(d, CmdBeginRenderPass2, cb, bi, si);
	pass_begun(d, cb, si && si->contents == VK_SUBPASS_CONTENTS_SECONDARY_COMMAND_BUFFERS,
		   subpasses(d, bi));
}

VKAPI_ATTR void VKAPI_CALL layer_CmdEndRenderPass(VkCommandBuffer cb)
{
	DEVICE_OF(cb, );
	pass_ending(d, cb);
	FORWARD(d, CmdEndRenderPass, cb);
	pass_end(d, cb);
}

VKAPI_ATTR void VKAPI_CALL layer_CmdEndRenderPass2(VkCommandBuffer cb,
							  const VkSubpassEndInfo *ei)
{
	DEVICE_OF(cb, );
	pass_ending(d, cb);
	FORWARD(d, CmdEndRenderPass2, cb, ei);
	pass_end(d, cb);
}

/* The format of a view; VK_FORMAT_UNDEFINED when not known. */
static VkFormat view_format(struct layer_device *d, VkImageView view)
{
	const struct view_info *v = view ? handle_map_get(&d->views, (uint64_t)view) : NULL;
	return v ? v->format : VK_FORMAT_UNDEFINED;
}

/* Dynamic rendering has no object to name: its size and attachments,
 * and the name of its first named attachment (its view's, or else its
 * image's). A pass resumed from another command buffer continues one
 * event there; one that is suspended ends here. Each part is its own. */
VKAPI_ATTR void VKAPI_CALL layer_CmdBeginRendering(VkCommandBuffer cb,
							  const VkRenderingInfo *ri)
{
	DEVICE_OF(cb, );
	struct cb_state *s = ri ? capturing(d, cb) : NULL;
	if (s) {
		struct event_name n = { "", 0 };
		struct targets t = { .subpasses = 1, .multiview = ri->viewMask != 0 };
		for (uint32_t i = 0; ri->pColorAttachments && i < ri->colorAttachmentCount; i++) {
			VkImageView v = ri->pColorAttachments[i].imageView;
			if (!v)
				continue;
			if (t.colors < PASS_COLORS_MAX) {
				t.color[t.colors] = view_format(d, v);
				t.views[t.view_count++] = v;
			}
			t.colors++;
		}
		VkImageView depth = ri->pDepthAttachment ? ri->pDepthAttachment->imageView : VK_NULL_HANDLE;
		VkImageView stencil = ri->pStencilAttachment ? ri->pStencilAttachment->imageView :
							       VK_NULL_HANDLE;
		t.depth = depth != VK_NULL_HANDLE;
		t.stencil = stencil != VK_NULL_HANDLE;
		t.depth_format = view_format(d, depth ? depth : stencil);
		/* A depth format names a separate stencil attachment only
		 * when it holds the stencil too. */
		if (depth && stencil && depth != stencil &&
		    !(format_has_depth(t.depth_format) && format_has_stencil(t.depth_format) &&
		      view_format(d, stencil) == t.depth_format))
			t.depth_format = VK_FORMAT_UNDEFINED;
		t.views[t.view_count++] = depth;
		t.views[t.view_count++] = stencil;
		name_add(&n, "%s", ri->flags & VK_RENDERING_RESUMING_BIT ? "Render Pass (resumed)" :
									  "Render Pass");
		name_add_extent(&n, ri->renderArea.extent.width, ri->renderArea.extent.height, 1);
		name_add_targets(&n, &t);
		name_add_attachment(&n, d, &t);
		pass_begin(d, s, &n, ri->viewMask, ri->renderArea.extent);
	}
	FORWARD(d, CmdBeginRendering, cb, ri);
	if (s)
		pass_begun(d, cb, ri->flags & VK_RENDERING_CONTENTS_SECONDARY_COMMAND_BUFFERS_BIT,
			   false);
}

VKAPI_ATTR void VKAPI_CALL layer_CmdEndRendering(VkCommandBuffer cb)
{
	DEVICE_OF(cb, );
	pass_ending(d, cb);
	FORWARD(d, CmdEndRendering, cb);
	pass_end(d, cb);
}

/* ------------------------------------------------------------------------ */
/* Leaf events                                                              */
/* ------------------------------------------------------------------------ */

/* Primitives of `verts` vertices drawn as `t`. */
static uint64_t prims_of(VkPrimitiveTopology t, uint64_t verts)
{
	switch (t) {
	case VK_PRIMITIVE_TOPOLOGY_POINT_LIST: return verts;
	case VK_PRIMITIVE_TOPOLOGY_LINE_LIST: return verts / 2;
	case VK_PRIMITIVE_TOPOLOGY_LINE_STRIP: return verts > 1 ? verts - 1 : 0;
	case VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST: return verts / 3;
	case VK_PRIMITIVE_TOPOLOGY_TRIANGLE_STRIP:
	case VK_PRIMITIVE_TOPOLOGY_TRIANGLE_FAN: return verts > 2 ? verts - 2 : 0;
	case VK_PRIMITIVE_TOPOLOGY_LINE_LIST_WITH_ADJACENCY: return verts / 4;
	case VK_PRIMITIVE_TOPOLOGY_LINE_STRIP_WITH_ADJACENCY: return verts > 3 ? verts - 3 : 0;
	case VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST_WITH_ADJACENCY: return verts / 6;
	case VK_PRIMITIVE_TOPOLOGY_TRIANGLE_STRIP_WITH_ADJACENCY: return verts > 4 ? (verts - 4) / 2 : 0;
	default: return CRUMBS_COUNT_UNKNOWN; /* patches: the tessellator decides */
	}
}

/* A leaf being recorded: its command buffer's state (NULL when it does
 * not record at full detail), its first slot and its name. */
struct leaf {
	struct cb_state *s;
	uint32_t slot;
	struct layer_device *d;
	struct event_name name;
};

static void leaf_begin(struct leaf *l, struct layer_device *d, VkCommandBuffer cb)
{
	l->s = capturing(d, cb);
	l->slot = NO_SLOT;
	l->d = d;
	l->name.len = 0;
	l->name.text[0] = '\0';
	/* Inside a multiview pass a timestamp takes a query per view. */
	if (l->s && !l->s->view_mask)
		l->slot = record_leaf_begin(l->s->cmd);
}

static void leaf_end(struct leaf *l, enum crumbs_event_kind kind, uint64_t draws,
		     uint64_t dispatches, uint64_t prims, uint64_t verts)
{
	if (l->s)
		record_leaf_end(l->s->cmd, l->slot, kind, l->name.text, l->name.len, draws,
				dispatches, prims, verts);
}

/* "Draw 36 vertices x4 · Name": the command, what it draws and the
 * bound pipeline's name. */
static void draw_end(struct leaf *l, const char *command, const char *what, uint64_t count,
		     uint32_t instances)
{
	if (!l->s)
		return;
	name_add(&l->name, "%s", command);
	name_add_count(&l->name, count, what, what[0] == 'v' ? "vertices" : "indices");
	if (instances != 1)
		name_add(&l->name, " x%u", instances);
	name_add_object(&l->name, l->s->pipeline[0]);
	uint64_t prims = prims_of(l->s->topology, count);
	if (prims != CRUMBS_COUNT_UNKNOWN)
		prims *= instances;
	leaf_end(l, CRUMBS_EVENT_DRAW, 1, 0, prims, count * instances);
}

/* Draws whose parameters the GPU reads: "DrawIndirect 4 draws · Name",
 * "DrawIndirectCount up to 64 draws · Name". */
static void indirect_end(struct leaf *l, const char *command, const char *up_to, uint32_t count)
{
	if (!l->s)
		return;
	name_add(&l->name, "%s%s", command, up_to);
	name_add_count(&l->name, count, "draw", "draws");
	name_add_object(&l->name, l->s->pipeline[0]);
	leaf_end(l, CRUMBS_EVENT_DRAW, CRUMBS_COUNT_UNKNOWN, 0, CRUMBS_COUNT_UNKNOWN,
		 CRUMBS_COUNT_UNKNOWN);
}

VKAPI_ATTR void VKAPI_CALL layer_CmdDraw(VkCommandBuffer cb, uint32_t verts,
						uint32_t instances, uint32_t first_vertex,
						uint32_t first_instance)
{
	DEVICE_OF(cb, );
	struct leaf l;
	leaf_begin(&l, d, cb);
	FORWARD(d, CmdDraw, cb, verts, instances, first_vertex, first_instance);
	draw_end(&l, "Draw", "vertex", verts, instances);
}

VKAPI_ATTR void VKAPI_CALL layer_CmdDrawIndexed(VkCommandBuffer cb, uint32_t indices,
						       uint32_t instances, uint32_t first_index,
						       int32_t vertex_offset, uint32_t first_instance)
{
	DEVICE_OF(cb, );
	struct leaf l;
	leaf_begin(&l, d, cb);
	FORWARD(d, CmdDrawIndexed, cb, indices, instances, first_index, vertex_offset,
		first_instance);
	draw_end(&l, "DrawIndexed", "index", indices, instances);
}

VKAPI_ATTR void VKAPI_CALL layer_CmdDrawIndirect(VkCommandBuffer cb, VkBuffer buffer,
							VkDeviceSize offset, uint32_t count,
							uint32_t stride)
{
	DEVICE_OF(cb, );
	struct leaf l;
	leaf_begin(&l, d, cb);
	FORWARD(d, CmdDrawIndirect, cb, buffer, offset, count, stride);
	indirect_end(&l, "DrawIndirect", "", count);
}

VKAPI_ATTR void VKAPI_CALL layer_CmdDrawIndexedIndirect(VkCommandBuffer cb, VkBuffer buffer,
							       VkDeviceSize offset, uint32_t count,
							       uint32_t stride)
{
	DEVICE_OF(cb, );
	struct leaf l;
	leaf_begin(&l, d, cb);
	FORWARD(d, CmdDrawIndexedIndirect, cb, buffer, offset, count, stride);
	indirect_end(&l, "DrawIndexedIndirect", "", count);
}

VKAPI_ATTR void VKAPI_CALL layer_CmdDrawIndirectCount(VkCommandBuffer cb, VkBuffer buffer,
							     VkDeviceSize offset, VkBuffer count_buffer,
							     VkDeviceSize count_offset,
							     uint32_t max_count, uint32_t stride)
{
	DEVICE_OF(cb, );
	struct leaf l;
	leaf_begin(&l, d, cb);
	FORWARD(d, CmdDrawIndirectCount, cb, buffer, offset, count_buffer, count_offset,
		max_count, stride);
	indirect_end(&l, "DrawIndirectCount", " up to", max_count);
}

VKAPI_ATTR void VKAPI_CALL layer_CmdDrawIndexedIndirectCount(
	VkCommandBuffer cb, VkBuffer buffer, VkDeviceSize offset, VkBuffer count_buffer,
	VkDeviceSize count_offset, uint32_t max_count, uint32_t stride)
{
	DEVICE_OF(cb, );
	struct leaf l;
	leaf_begin(&l, d, cb);
	FORWARD(d, CmdDrawIndexedIndirectCount, cb, buffer, offset, count_buffer, count_offset,
		max_count, stride);
	indirect_end(&l, "DrawIndexedIndirectCount", " up to", max_count);
}

/* The two multi-draw structures hold their vertex and index counts at
 * the same place. */
_Static_assert(offsetof(VkMultiDrawInfoEXT, vertexCount) ==
	       offsetof(VkMultiDrawIndexedInfoEXT, indexCount), "multi-draw counts");

/* The leaf of a multi-draw: `count` elements `stride` bytes apart, each
 * with its vertex (or index) count where VkMultiDrawInfoEXT has it. One
 * leaf for the whole call: its draws are one command. */
static void multi_draw_end(struct leaf *l, const char *command, bool indexed, uint32_t count,
			   const void *info, uint32_t stride, uint32_t instances)
{
	if (!l->s)
		return;
	uint64_t verts = 0, prims = 0;
	for (uint32_t i = 0; info && i < count; i++) {
		uint32_t n;
		memcpy(&n, (const char *)info + (size_t)i * stride +
			   offsetof(VkMultiDrawInfoEXT, vertexCount), sizeof(n));
		uint64_t p = prims_of(l->s->topology, n);
		verts += (uint64_t)n * instances;
		prims = (p == CRUMBS_COUNT_UNKNOWN || prims == CRUMBS_COUNT_UNKNOWN) ?
				CRUMBS_COUNT_UNKNOWN : prims + p * instances;
	}
	/* "DrawMultiIndexed 3 draws 840 indices x2 · Name" */
	name_add(&l->name, "%s", command);
	if (count != 1)
		name_add_count(&l->name, count, "draw", "draws");
	name_add_count(&l->name, verts / (instances ? instances : 1), indexed ? "index" : "vertex",
		       indexed ? "indices" : "vertices");
	if (instances != 1)
		name_add(&l->name, " x%u", instances);
	name_add_object(&l->name, l->s->pipeline[0]);
	leaf_end(l, CRUMBS_EVENT_DRAW, count, 0, prims, verts);
}

VKAPI_ATTR void VKAPI_CALL layer_CmdDrawMultiEXT(VkCommandBuffer cb, uint32_t count,
							const VkMultiDrawInfoEXT *info,
							uint32_t instances, uint32_t first_instance,
							uint32_t stride)
{
	DEVICE_OF(cb, );
	struct leaf l;
	leaf_begin(&l, d, cb);
	FORWARD(d, CmdDrawMultiEXT, cb, count, info, instances, first_instance, stride);
	multi_draw_end(&l, "DrawMulti", false, count, info, stride, instances);
}

VKAPI_ATTR void VKAPI_CALL layer_CmdDrawMultiIndexedEXT(VkCommandBuffer cb, uint32_t count,
							       const VkMultiDrawIndexedInfoEXT *info,
							       uint32_t instances,
							       uint32_t first_instance,
							       uint32_t stride,
							       const int32_t *vertex_offset)
{
	DEVICE_OF(cb, );
	struct leaf l;
	leaf_begin(&l, d, cb);
	FORWARD(d, CmdDrawMultiIndexedEXT, cb, count, info, instances, first_instance, stride,
		vertex_offset);
	multi_draw_end(&l, "DrawMultiIndexed", true, count, info, stride, instances);
}

/* Mesh shading: the task or mesh workgroups launched; its primitives
 * are the shaders' to decide. */
static void mesh_end(struct leaf *l)
{
	if (!l->s)
		return;
	name_add_object(&l->name, l->s->pipeline[0]);
	leaf_end(l, CRUMBS_EVENT_DRAW, 1, 0, CRUMBS_COUNT_UNKNOWN, CRUMBS_COUNT_UNKNOWN);
}

VKAPI_ATTR void VKAPI_CALL layer_CmdDrawMeshTasksEXT(VkCommandBuffer cb, uint32_t x,
							    uint32_t y, uint32_t z)
{
	DEVICE_OF(cb, );
	struct leaf l;
	leaf_begin(&l, d, cb);
	FORWARD(d, CmdDrawMeshTasksEXT, cb, x, y, z);
	if (l.s)
		name_add(&l.name, "DrawMeshTasks %ux%ux%u", x, y, z);
	mesh_end(&l);
}

VKAPI_ATTR void VKAPI_CALL layer_CmdDrawMeshTasksIndirectEXT(VkCommandBuffer cb,
								    VkBuffer buffer,
								    VkDeviceSize offset,
								    uint32_t count, uint32_t stride)
{
	DEVICE_OF(cb, );
	struct leaf l;
	leaf_begin(&l, d, cb);
	FORWARD(d, CmdDrawMeshTasksIndirectEXT, cb, buffer, offset, count, stride);
	indirect_end(&l, "DrawMeshTasksIndirect", "", count);
}

VKAPI_ATTR void VKAPI_CALL layer_CmdDrawMeshTasksIndirectCountEXT(
	VkCommandBuffer cb, VkBuffer buffer, VkDeviceSize offset, VkBuffer count_buffer,
	VkDeviceSize count_offset, uint32_t max_count, uint32_t stride)
{
	DEVICE_OF(cb, );
	struct leaf l;
	leaf_begin(&l, d, cb);
	FORWARD(d, CmdDrawMeshTasksIndirectCountEXT, cb, buffer, offset, count_buffer,
		count_offset, max_count, stride);
	indirect_end(&l, "DrawMeshTasksIndirectCount", " up to", max_count);
}

/* "Dispatch 40x23x1 · Name", with the bound compute pipeline's name. */
static void dispatch_end(struct leaf *l, int point)
{
	if (!l->s)
		return;
	name_add_object(&l->name, l->s->pipeline[point]);
	leaf_end(l, point == 2 ? CRUMBS_EVENT_TRACE_RAYS : CRUMBS_EVENT_DISPATCH, 0, 1, 0, 0);
}

VKAPI_ATTR void VKAPI_CALL layer_CmdDispatch(VkCommandBuffer cb, uint32_t x, uint32_t y,
						    uint32_t z)
{
	DEVICE_OF(cb, );
	struct leaf l;
	leaf_begin(&l, d, cb);
	FORWARD(d, CmdDispatch, cb, x, y, z);
	if (l.s)
		name_add(&l.name, "Dispatch %ux%ux%u", x, y, z);
	dispatch_end(&l, 1);
}

VKAPI_ATTR void VKAPI_CALL layer_CmdDispatchBase(VkCommandBuffer cb, uint32_t bx,
							uint32_t by, uint32_t bz, uint32_t x,
							uint32_t y, uint32_t z)
{
	DEVICE_OF(cb, );
	struct leaf l;
	leaf_begin(&l, d, cb);
	FORWARD(d, CmdDispatchBase, cb, bx, by, bz, x, y, z);
	if (l.s)
		name_add(&l.name, "DispatchBase %ux%ux%u from %u,%u,%u", x, y, z, bx, by, bz);
	dispatch_end(&l, 1);
}

VKAPI_ATTR void VKAPI_CALL layer_CmdDispatchIndirect(VkCommandBuffer cb, VkBuffer buffer,
							    VkDeviceSize offset)
{
	DEVICE_OF(cb, );
	struct leaf l;
	leaf_begin(&l, d, cb);
	FORWARD(d, CmdDispatchIndirect, cb, buffer, offset);
	if (l.s)
		name_add(&l.name, "DispatchIndirect");
	dispatch_end(&l, 1);
}

VKAPI_ATTR void VKAPI_CALL layer_CmdTraceRaysKHR(
	VkCommandBuffer cb, const VkStridedDeviceAddressRegionKHR *raygen,
	const VkStridedDeviceAddressRegionKHR *miss, const VkStridedDeviceAddressRegionKHR *hit,
	const VkStridedDeviceAddressRegionKHR *callable, uint32_t w, uint32_t h, uint32_t depth)
{
	DEVICE_OF(cb, );
	struct leaf l;
	leaf_begin(&l, d, cb);
	FORWARD(d, CmdTraceRaysKHR, cb, raygen, miss, hit, callable, w, h, depth);
	if (l.s)
		name_add(&l.name, "TraceRays %ux%ux%u", w, h, depth);
	dispatch_end(&l, 2);
}

VKAPI_ATTR void VKAPI_CALL layer_CmdTraceRaysIndirectKHR(
	VkCommandBuffer cb, const VkStridedDeviceAddressRegionKHR *raygen,
	const VkStridedDeviceAddressRegionKHR *miss, const VkStridedDeviceAddressRegionKHR *hit,
	const VkStridedDeviceAddressRegionKHR *callable, VkDeviceAddress address)
{
	DEVICE_OF(cb, );
	struct leaf l;
	leaf_begin(&l, d, cb);
	FORWARD(d, CmdTraceRaysIndirectKHR, cb, raygen, miss, hit, callable, address);
	if (l.s)
		name_add(&l.name, "TraceRaysIndirect");
	dispatch_end(&l, 2);
}

/*
 * Transfers: a leaf of `kind` around the call, named by `describe`, a
 * statement that may use l (a struct leaf, l.s set) and d. Named by what
 * the program called the destination (else the source).
 */
#define TRANSFER(name, kind, params, args, describe)                          \
	VKAPI_ATTR void VKAPI_CALL layer_##name params                 \
	{                                                                     \
		DEVICE_OF(cb, );                                                \
		struct leaf l;                                                \
		leaf_begin(&l, d, cb);                                        \
		FORWARD(d, name, UNPAREN args);                               \
		if (l.s) {                                                    \
			describe;                                             \
			leaf_end(&l, kind, 0, 0, 0, 0);                       \
		}                                                             \
	}
#define UNPAREN(...) __VA_ARGS__

/* " · NAME" of the first of two objects that has one. */
static void name_add_either(struct leaf *l, VkObjectType t1, uint64_t h1, VkObjectType t2,
			    uint64_t h2)
{
	size_t len = l->name.len;
	name_add_named(&l->name, l->d, t1, h1);
	if (l->name.len == len)
		name_add_named(&l->name, l->d, t2, h2);
}

static VkDeviceSize copy_bytes(const VkBufferCopy *r, uint32_t n)
{
	VkDeviceSize sum = 0;
	for (uint32_t i = 0; r && i < n; i++)
		sum += r[i].size;
	return sum;
}

static VkDeviceSize copy2_bytes(const VkBufferCopy2 *r, uint32_t n)
{
	VkDeviceSize sum = 0;
	for (uint32_t i = 0; r && i < n; i++)
		sum += r[i].size;
	return sum;
}

/* The extent of a blit region (its offsets may run either way). */
static void name_add_blit_extent(struct event_name *n, const VkOffset3D o[2])
{
	int64_t w = (int64_t)o[1].x - o[0].x, h = (int64_t)o[1].y - o[0].y;
	int64_t dz = (int64_t)o[1].z - o[0].z;
	name_add_extent(n, (uint32_t)(w < 0 ? -w : w), (uint32_t)(h < 0 ? -h : h),
			(uint32_t)(dz < 0 ? -dz : dz));
}

#define BUF(h) VK_OBJECT_TYPE_BUFFER, (uint64_t)(h)
#define IMG(h) VK_OBJECT_TYPE_IMAGE, (uint64_t)(h)

TRANSFER(CmdCopyBuffer, CRUMBS_EVENT_COPY,
	 (VkCommandBuffer cb, VkBuffer src, VkBuffer dst, uint32_t n, const VkBufferCopy *r),
	 (cb, src, dst, n, r),
	 (name_add(&l.name, "Copy buffer"), name_add_bytes(&l.name, copy_bytes(r, n)),
	  name_add_regions(&l.name, n), name_add_either(&l, BUF(dst), BUF(src))))
TRANSFER(CmdCopyImage, CRUMBS_EVENT_COPY,
	 (VkCommandBuffer cb, VkImage src, VkImageLayout sl, VkImage dst, VkImageLayout dl,
	  uint32_t n, const VkImageCopy *r),
	 (cb, src, sl, dst, dl, n, r),
	 (name_add(&l.name, "Copy image"),
	  n && r ? name_add_extent(&l.name, r->extent.width, r->extent.height, r->extent.depth) : (void)0,
	  name_add_regions(&l.name, n), name_add_either(&l, IMG(dst), IMG(src))))
TRANSFER(CmdCopyBufferToImage, CRUMBS_EVENT_COPY,
	 (VkCommandBuffer cb, VkBuffer src, VkImage dst, VkImageLayout dl, uint32_t n,
	  const VkBufferImageCopy *r),
	 (cb, src, dst, dl, n, r),
	 (name_add(&l.name, "Copy buffer to image"),
	  n && r ? name_add_extent(&l.name, r->imageExtent.width, r->imageExtent.height,
				   r->imageExtent.depth) : (void)0,
	  name_add_regions(&l.name, n), name_add_either(&l, IMG(dst), BUF(src))))
TRANSFER(CmdCopyImageToBuffer, CRUMBS_EVENT_COPY,
	 (VkCommandBuffer cb, VkImage src, VkImageLayout sl, VkBuffer dst, uint32_t n,
	  const VkBufferImageCopy *r),
	 (cb, src, sl, dst, n, r),
	 (name_add(&l.name, "Copy image to buffer"),
	  n && r ? name_add_extent(&l.name, r->imageExtent.width, r->imageExtent.height,
				   r->imageExtent.depth) : (void)0,
	  name_add_regions(&l.name, n), name_add_either(&l, BUF(dst), IMG(src))))
TRANSFER(CmdCopyBuffer2, CRUMBS_EVENT_COPY, (VkCommandBuffer cb, const VkCopyBufferInfo2 *i),
	 (cb, i),
	 (name_add(&l.name, "Copy buffer"),
	  i ? (name_add_bytes(&l.name, copy2_bytes(i->pRegions, i->regionCount)),
	       name_add_regions(&l.name, i->regionCount),
	       name_add_either(&l, BUF(i->dstBuffer), BUF(i->srcBuffer))) : (void)0))
TRANSFER(CmdCopyImage2, CRUMBS_EVENT_COPY, (VkCommandBuffer cb, const VkCopyImageInfo2 *i),
	 (cb, i),
	 (name_add(&l.name, "Copy image"),
	  i && i->regionCount && i->pRegions ?
		  name_add_extent(&l.name, i->pRegions->extent.width, i->pRegions->extent.height,
				  i->pRegions->extent.depth) : (void)0,
	  i ? (name_add_regions(&l.name, i->regionCount),
	       name_add_either(&l, IMG(i->dstImage), IMG(i->srcImage))) : (void)0))
TRANSFER(CmdCopyBufferToImage2, CRUMBS_EVENT_COPY,
	 (VkCommandBuffer cb, const VkCopyBufferToImageInfo2 *i), (cb, i),
	 (name_add(&l.name, "Copy buffer to image"),
	  i && i->regionCount && i->pRegions ?
		  name_add_extent(&l.name, i->pRegions->imageExtent.width,
				  i->pRegions->imageExtent.height, i->pRegions->imageExtent.depth) : (void)0,
	  i ? (name_add_regions(&l.name, i->regionCount),
	       name_add_either(&l, IMG(i->dstImage), BUF(i->srcBuffer))) : (void)0))
TRANSFER(CmdCopyImageToBuffer2, CRUMBS_EVENT_COPY,
	 (VkCommandBuffer cb, const VkCopyImageToBufferInfo2 *i), (cb, i),
	 (name_add(&l.name, "Copy image to buffer"),
	  i && i->regionCount && i->pRegions ?
		  name_add_extent(&l.name, i->pRegions->imageExtent.width,
				  i->pRegions->imageExtent.height, i->pRegions->imageExtent.depth) : (void)0,
	  i ? (name_add_regions(&l.name, i->regionCount),
	       name_add_either(&l, BUF(i->dstBuffer), IMG(i->srcImage))) : (void)0))
TRANSFER(CmdUpdateBuffer, CRUMBS_EVENT_COPY,
	 (VkCommandBuffer cb, VkBuffer dst, VkDeviceSize off, VkDeviceSize size, const void *data),
	 (cb, dst, off, size, data),
	 (name_add(&l.name, "Update buffer"), name_add_bytes(&l.name, size),
	  name_add_named(&l.name, d, BUF(dst))))
TRANSFER(CmdFillBuffer, CRUMBS_EVENT_CLEAR,
	 (VkCommandBuffer cb, VkBuffer dst, VkDeviceSize off, VkDeviceSize size, uint32_t data),
	 (cb, dst, off, size, data),
	 (name_add(&l.name, "Fill buffer"), name_add_bytes(&l.name, size),
	  name_add_named(&l.name, d, BUF(dst))))
TRANSFER(CmdBlitImage, CRUMBS_EVENT_BLIT,
	 (VkCommandBuffer cb, VkImage src, VkImageLayout sl, VkImage dst, VkImageLayout dl,
	  uint32_t n, const VkImageBlit *r, VkFilter f),
	 (cb, src, sl, dst, dl, n, r, f),
	 (name_add(&l.name, "Blit"),
	  n && r ? (name_add_blit_extent(&l.name, r->srcOffsets), name_add(&l.name, " to"),
		    name_add_blit_extent(&l.name, r->dstOffsets)) : (void)0,
	  name_add_regions(&l.name, n), name_add_either(&l, IMG(dst), IMG(src))))
TRANSFER(CmdBlitImage2, CRUMBS_EVENT_BLIT, (VkCommandBuffer cb, const VkBlitImageInfo2 *i),
	 (cb, i),
	 (name_add(&l.name, "Blit"),
	  i && i->regionCount && i->pRegions ?
		  (name_add_blit_extent(&l.name, i->pRegions->srcOffsets), name_add(&l.name, " to"),
		   name_add_blit_extent(&l.name, i->pRegions->dstOffsets)) : (void)0,
	  i ? (name_add_regions(&l.name, i->regionCount),
	       name_add_either(&l, IMG(i->dstImage), IMG(i->srcImage))) : (void)0))
TRANSFER(CmdClearColorImage, CRUMBS_EVENT_CLEAR,
	 (VkCommandBuffer cb, VkImage img, VkImageLayout il, const VkClearColorValue *c,
	  uint32_t n, const VkImageSubresourceRange *r),
	 (cb, img, il, c, n, r),
	 (name_add(&l.name, "Clear color image"), name_add_named(&l.name, d, IMG(img))))
TRANSFER(CmdClearDepthStencilImage, CRUMBS_EVENT_CLEAR,
	 (VkCommandBuffer cb, VkImage img, VkImageLayout il, const VkClearDepthStencilValue *c,
	  uint32_t n, const VkImageSubresourceRange *r),
	 (cb, img, il, c, n, r),
	 (name_add(&l.name, "Clear depth/stencil image"), name_add_named(&l.name, d, IMG(img))))
TRANSFER(CmdClearAttachments, CRUMBS_EVENT_CLEAR,
	 (VkCommandBuffer cb, uint32_t n, const VkClearAttachment *a, uint32_t nr,
	  const VkClearRect *r),
	 (cb, n, a, nr, r),
	 (name_add(&l.name, "Clear"), name_add_count(&l.name, n, "attachment", "attachments")))
TRANSFER(CmdResolveImage, CRUMBS_EVENT_RESOLVE,
	 (VkCommandBuffer cb, VkImage src, VkImageLayout sl, VkImage dst, VkImageLayout dl,
	  uint32_t n, const VkImageResolve *r),
	 (cb, src, sl, dst, dl, n, r),
	 (name_add(&l.name, "Resolve"),
	  n && r ? name_add_extent(&l.name, r->extent.width, r->extent.height, r->extent.depth) : (void)0,
	  name_add_regions(&l.name, n), name_add_either(&l, IMG(dst), IMG(src))))
TRANSFER(CmdResolveImage2, CRUMBS_EVENT_RESOLVE,
	 (VkCommandBuffer cb, const VkResolveImageInfo2 *i), (cb, i),
	 (name_add(&l.name, "Resolve"),
	  i && i->regionCount && i->pRegions ?
		  name_add_extent(&l.name, i->pRegions->extent.width, i->pRegions->extent.height,
				  i->pRegions->extent.depth) : (void)0,
	  i ? (name_add_regions(&l.name, i->regionCount),
	       name_add_either(&l, IMG(i->dstImage), IMG(i->srcImage))) : (void)0))

VKAPI_ATTR void VKAPI_CALL layer_CmdExecuteCommands(VkCommandBuffer cb, uint32_t count,
							   const VkCommandBuffer *secondaries)
{
	DEVICE_OF(cb, );
	struct cb_state *s = recording(d, cb);
	if (s)
		record_execute_edge(s->cmd, true);
	FORWARD(d, CmdExecuteCommands, cb, count, secondaries);
	/* At every detail, not only in a capture frame: the secondaries'
	 * labels are scopes of a run's frames too (Qt Quick labels its pass
	 * in a secondary command buffer). */
	if (s && secondaries)
		crumbs_cmd_execute(s->cmd, count, secondaries);
	if (s)
		record_execute_edge(s->cmd, false);
}

