/* SPDX-License-Identifier: MIT */
/*
 * test_counters.c: pipeline statistics per scope, on a real device
 * (lavapipe has pipelineStatisticsQuery), under validation: full-screen
 * triangles and dispatches whose vertices, primitives, fragments and
 * invocations the test knows, in nested scopes, in a render pass, across
 * command buffers and in secondaries; scopes whose counts cannot be known
 * marked so; and the sample renderer's capture against what it drew.
 */
#include <setjmp.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "vkt.h"
#include "pipelines_comp.h"
#include "pipelines_frag.h"
#include "pipelines_vert.h"

#define W 64
#define H 48

#define CHECK(call)                                                             \
	do {                                                                    \
		VkResult r_ = (call);                                           \
		if (r_ != VK_SUCCESS)                                           \
			fail_msg("%s failed: VkResult %d", #call, (int)r_);     \
	} while (0)

extern char **environ;

/* A target, a render pass that clears it, a pipeline that draws a
 * triangle covering it, and one that dispatches empty invocations. */
struct scene {
	struct vkt t;
	VkImage image;
	VkDeviceMemory memory;
	VkImageView view;
	VkRenderPass pass;
	VkFramebuffer framebuffer;
	VkPipelineLayout layout;
	VkShaderModule modules[3];
	VkPipeline draw, dispatch;
	/* The fragment shader invocations the device reports for one
	 * triangle, by a query of the test's own. */
	uint64_t fragments;
};

static VkShaderModule module(struct scene *s, const uint32_t *code, size_t size)
{
	VkShaderModuleCreateInfo ci = { VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, NULL, 0, size,
					code };
	VkShaderModule m;
	CHECK(vkCreateShaderModule(s->t.device, &ci, NULL, &m));
	return m;
}

static void reference_fragments(struct scene *s);

static void scene_init_with(struct scene *s, const struct crumbs_desc *desc)
{
	vkt_counters = true;
	vkt_init(&s->t, desc);
	VkDevice dev = s->t.device;

	VkImageCreateInfo ic = { VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO, NULL, 0, VK_IMAGE_TYPE_2D,
				 VK_FORMAT_R8G8B8A8_UNORM, { W, H, 1 }, 1, 1, VK_SAMPLE_COUNT_1_BIT,
				 VK_IMAGE_TILING_OPTIMAL, VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT,
				 VK_SHARING_MODE_EXCLUSIVE, 0, NULL, VK_IMAGE_LAYOUT_UNDEFINED };
	CHECK(vkCreateImage(dev, &ic, NULL, &s->image));
	VkMemoryRequirements req;
	vkGetImageMemoryRequirements(dev, s->image, &req);
	uint32_t type = 0;
	while (!(req.memoryTypeBits & (1u << type)))
		type++;
	VkMemoryAllocateInfo ai = { VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, NULL, req.size, type };
	CHECK(vkAllocateMemory(dev, &ai, NULL, &s->memory));
	CHECK(vkBindImageMemory(dev, s->image, s->memory, 0));
	VkImageViewCreateInfo vc = { VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO, NULL, 0, s->image,
				     VK_IMAGE_VIEW_TYPE_2D, VK_FORMAT_R8G8B8A8_UNORM, { 0 },
				     { VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1 } };
	CHECK(vkCreateImageView(dev, &vc, NULL, &s->view));
	VkAttachmentDescription at = { 0, VK_FORMAT_R8G8B8A8_UNORM, VK_SAMPLE_COUNT_1_BIT,
				       VK_ATTACHMENT_LOAD_OP_CLEAR, VK_ATTACHMENT_STORE_OP_STORE,
				       VK_ATTACHMENT_LOAD_OP_DONT_CARE, VK_ATTACHMENT_STORE_OP_DONT_CARE,
				       VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL };
	VkAttachmentReference ref = { 0, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL };
	VkSubpassDescription sp = { 0, VK_PIPELINE_BIND_POINT_GRAPHICS, 0, NULL, 1, &ref, NULL, NULL,
				    0, NULL };
	VkRenderPassCreateInfo rc = { VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO, NULL, 0, 1, &at, 1,
				      &sp, 0, NULL };
	CHECK(vkCreateRenderPass(dev, &rc, NULL, &s->pass));
	VkFramebufferCreateInfo fc = { VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO, NULL, 0, s->pass, 1,
				       &s->view, W, H, 1 };
	CHECK(vkCreateFramebuffer(dev, &fc, NULL, &s->framebuffer));
	VkPipelineLayoutCreateInfo lc = { VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, NULL, 0, 0,
					  NULL, 0, NULL };
	CHECK(vkCreatePipelineLayout(dev, &lc, NULL, &s->layout));
	s->modules[0] = module(s, shader_pipelines_vert, sizeof(shader_pipelines_vert));
	s->modules[1] = module(s, shader_pipelines_frag, sizeof(shader_pipelines_frag));
	s->modules[2] = module(s, shader_pipelines_comp, sizeof(shader_pipelines_comp));

	VkPipelineShaderStageCreateInfo stages[2] = {
		{ VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, NULL, 0,
		  VK_SHADER_STAGE_VERTEX_BIT, s->modules[0], "main", NULL },
		{ VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, NULL, 0,
		  VK_SHADER_STAGE_FRAGMENT_BIT, s->modules[1], "main", NULL },
	};
	VkPipelineVertexInputStateCreateInfo vi = {
		VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO, NULL, 0, 0, NULL, 0, NULL };
	VkPipelineInputAssemblyStateCreateInfo ia = {
		VK_STRUCTURE_TYPE_PIPELINE_INPUT_ASSEMBLY_STATE_CREATE_INFO, NULL, 0,
		VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST, VK_FALSE };
	VkViewport viewport = { 0, 0, W, H, 0, 1 };
	VkRect2D scissor = { { 0, 0 }, { W, H } };
	VkPipelineViewportStateCreateInfo vp = { VK_STRUCTURE_TYPE_PIPELINE_VIEWPORT_STATE_CREATE_INFO,
						 NULL, 0, 1, &viewport, 1, &scissor };
	VkPipelineRasterizationStateCreateInfo rs = {
		VK_STRUCTURE_TYPE_PIPELINE_RASTERIZATION_STATE_CREATE_INFO, NULL, 0, VK_FALSE, VK_FALSE,
		VK_POLYGON_MODE_FILL, VK_CULL_MODE_NONE, VK_FRONT_FACE_COUNTER_CLOCKWISE, VK_FALSE, 0,
		0, 0, 1 };
	VkPipelineMultisampleStateCreateInfo ms = {
		VK_STRUCTURE_TYPE_PIPELINE_MULTISAMPLE_STATE_CREATE_INFO, NULL, 0, VK_SAMPLE_COUNT_1_BIT,
		VK_FALSE, 0, NULL, VK_FALSE, VK_FALSE };
	VkPipelineColorBlendAttachmentState blend = { .colorWriteMask = 0xf };
	VkPipelineColorBlendStateCreateInfo cb = {
		VK_STRUCTURE_TYPE_PIPELINE_COLOR_BLEND_STATE_CREATE_INFO, NULL, 0, VK_FALSE,
		VK_LOGIC_OP_COPY, 1, &blend, { 0 } };
	VkGraphicsPipelineCreateInfo gi = { VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO, NULL, 0, 2,
					    stages, &vi, &ia, NULL, &vp, &rs, &ms, NULL, &cb, NULL,
					    s->layout, s->pass, 0, VK_NULL_HANDLE, -1 };
	CHECK(vkCreateGraphicsPipelines(dev, VK_NULL_HANDLE, 1, &gi, NULL, &s->draw));
	VkComputePipelineCreateInfo ci = {
		VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO, NULL, 0,
		{ VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, NULL, 0,
		  VK_SHADER_STAGE_COMPUTE_BIT, s->modules[2], "main", NULL },
		s->layout, VK_NULL_HANDLE, -1
	};
	CHECK(vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &ci, NULL, &s->dispatch));
	reference_fragments(s);
}

/* Outside captures, the test's own query around one triangle: what
 * crumbs' must agree with. Every pixel is shaded at least once; lavapipe
 * counts whole 4 x 4 blocks, and more than once, so the count is not the
 * pixels'. */
static void reference_fragments(struct scene *s)
{
	VkQueryPool pool;
	VkQueryPoolCreateInfo qi = { VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO, NULL, 0,
				     VK_QUERY_TYPE_PIPELINE_STATISTICS, 1,
				     VK_QUERY_PIPELINE_STATISTIC_FRAGMENT_SHADER_INVOCATIONS_BIT };
	CHECK(vkCreateQueryPool(s->t.device, &qi, NULL, &pool));
	vkResetQueryPool(s->t.device, pool, 0, 1);
	VkCommandBuffer cb = vkt_begin(&s->t);
	VkClearValue clear = { { { 0, 0, 0, 1 } } };
	VkRenderPassBeginInfo rb = { VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO, NULL, s->pass,
				     s->framebuffer, { { 0, 0 }, { W, H } }, 1, &clear };
	vkCmdBeginRenderPass(cb, &rb, VK_SUBPASS_CONTENTS_INLINE);
	vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, s->draw);
	vkCmdBeginQuery(cb, pool, 0, 0);
	vkCmdDraw(cb, 3, 1, 0, 0);
	vkCmdEndQuery(cb, pool, 0);
	vkCmdEndRenderPass(cb);
	CHECK(vkEndCommandBuffer(cb));
	VkSubmitInfo si = { VK_STRUCTURE_TYPE_SUBMIT_INFO, NULL, 0, NULL, NULL, 1, &cb, 0, NULL };
	CHECK(vkQueueSubmit(s->t.queue, 1, &si, VK_NULL_HANDLE));
	CHECK(vkQueueWaitIdle(s->t.queue));
	CHECK(vkGetQueryPoolResults(s->t.device, pool, 0, 1, sizeof(s->fragments), &s->fragments,
				    sizeof(s->fragments),
				    VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
	vkDestroyQueryPool(s->t.device, pool, NULL);
	assert_true(s->fragments >= (uint64_t)W * H);
}

static void scene_init(struct scene *s)
{
	scene_init_with(s, NULL);
}

static void scene_destroy(struct scene *s)
{
	VkDevice dev = s->t.device;
	vkDeviceWaitIdle(dev);
	vkDestroyPipeline(dev, s->draw, NULL);
	vkDestroyPipeline(dev, s->dispatch, NULL);
	for (int i = 0; i < 3; i++)
		vkDestroyShaderModule(dev, s->modules[i], NULL);
	vkDestroyPipelineLayout(dev, s->layout, NULL);
	vkDestroyFramebuffer(dev, s->framebuffer, NULL);
	vkDestroyRenderPass(dev, s->pass, NULL);
	vkDestroyImageView(dev, s->view, NULL);
	vkDestroyImage(dev, s->image, NULL);
	vkFreeMemory(dev, s->memory, NULL);
	vkt_destroy(&s->t);
	vkt_counters = false;
	if (vkt_validation_messages)
		fail_msg("%u validation messages", vkt_validation_messages);
}

/* The render pass, its edges told to crumbs; contents inline or in
 * secondaries. */
static void pass_begin(struct scene *s, crumbs_cmd *h, VkCommandBuffer cb, bool secondaries)
{
	VkClearValue clear = { { { 0, 0, 0, 1 } } };
	VkRenderPassBeginInfo rb = { VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO, NULL, s->pass,
				     s->framebuffer, { { 0, 0 }, { W, H } }, 1, &clear };
	crumbs_pass_edge(h, CRUMBS_PASS_BEGINNING, W, H);
	vkCmdBeginRenderPass(cb, &rb, secondaries ? VK_SUBPASS_CONTENTS_SECONDARY_COMMAND_BUFFERS :
						    VK_SUBPASS_CONTENTS_INLINE);
	crumbs_pass_edge(h, secondaries ? CRUMBS_PASS_BEGUN_SECONDARY : CRUMBS_PASS_BEGUN, 0, 0);
	if (!secondaries)
		vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, s->draw);
}

static void pass_end(crumbs_cmd *h, VkCommandBuffer cb)
{
	crumbs_pass_edge(h, CRUMBS_PASS_ENDING, 0, 0);
	vkCmdEndRenderPass(cb);
	crumbs_pass_edge(h, CRUMBS_PASS_ENDED, 0, 0);
}

/* `n` triangles that each cover the target. */
static void triangles(crumbs_cmd *h, VkCommandBuffer cb, uint32_t n)
{
	vkCmdDraw(cb, 3, n, 0, 0);
	crumbs_draws(h, 1, n, 3 * n);
}

static void submit_end(struct scene *s, VkCommandBuffer cb, crumbs_cmd *h)
{
	crumbs_cmd_end(h);
	CHECK(vkEndCommandBuffer(cb));
	vkt_submit(&s->t, cb, VK_NULL_HANDLE, 0, VK_NULL_HANDLE, 0);
}

static const struct frame *capture_done(struct scene *s, reader **c)
{
	crumbs_frame(s->t.crumbs);
	return vkt_read(vkt_finish_capture(&s->t, NULL), c);
}

static void start_capture(struct scene *s)
{
	assert_int_equal(crumbs_capture(s->t.crumbs, NULL), CRUMBS_OK);
	crumbs_frame(s->t.crumbs);
}

static uint64_t counter(const struct node *n, bool inclusive, enum crumbs_pipeline_counter k)
{
	uint64_t v = UINT64_MAX;
	if (!node_counter(n, inclusive, k, &v))
		fail_msg("'%.*s' has no %s %s", (int)n->name_len, n->name,
			 inclusive ? "inclusive" : "exclusive", counter_name(k));
	return v;
}

static const struct node *find(const struct frame *f, const char *name)
{
	const struct node *n = vkt_find(f->queues[0].root, name);
	if (!n)
		fail_msg("no scope '%s'", name);
	return n;
}

/* What n's triangles, each covering the W x H target, must have counted:
 * as many prims as the draws said, 3 vertices each, and each the
 * fragments the device reports for one. */
static void check_triangles(const struct scene *s, const struct node *n, bool inclusive,
			    uint64_t prims)
{
	assert_int_equal(counter(n, inclusive, CRUMBS_COUNTER_IA_PRIMITIVES), prims);
	assert_int_equal(counter(n, inclusive, CRUMBS_COUNTER_IA_VERTICES), 3 * prims);
	/* A device may shade a vertex once for several uses (NVIDIA's do,
	 * even unindexed); lavapipe shades each. */
	uint64_t vs = counter(n, inclusive, CRUMBS_COUNTER_VS_INVOCATIONS);
	assert_true(vs > 0 && vs <= 3 * prims);
	assert_int_equal(counter(n, inclusive, CRUMBS_COUNTER_CLIP_INVOCATIONS), prims);
	assert_int_equal(counter(n, inclusive, CRUMBS_COUNTER_FS_INVOCATIONS),
			 s->fragments * prims);
}

/*
 * Nested scopes in and around a render pass, and a dispatch: each scope's
 * exclusive counts are its own draws', its inclusive its subtree's; the
 * pass's fragments per pixel follow from its area.
 */
static void nested(void **state)
{
	(void)state;
	struct scene s;
	scene_init(&s);
	start_capture(&s);
	VkCommandBuffer cb = vkt_begin(&s.t);
	crumbs_cmd *h = crumbs_cmd_begin(s.t.crumbs, cb, s.t.queue);
	crumbs_scope_begin(h, 0, "Frame");
	crumbs_scope_begin(h, 1, "Pass");
	pass_begin(&s, h, cb, false);
	triangles(h, cb, 1);
	crumbs_scope_begin(h, 2, "One");
	triangles(h, cb, 1);
	crumbs_scope_end(h);
	crumbs_scope_begin(h, 2, "Two");
	triangles(h, cb, 2);
	crumbs_scope_begin(h, 3, "Three");
	triangles(h, cb, 3);
	crumbs_scope_end(h);
	crumbs_scope_end(h);
	pass_end(h, cb);
	crumbs_scope_end(h);
	crumbs_scope_begin(h, 1, "Compute");
	vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, s.dispatch);
	vkCmdDispatch(cb, 4, 3, 2);
	crumbs_dispatches(h, 1);
	crumbs_scope_end(h);
	crumbs_scope_end(h);
	submit_end(&s, cb, h);

	reader *c;
	const struct frame *f = capture_done(&s, &c);
	const struct node *pass = find(f, "Pass"), *two = find(f, "Two");
	check_triangles(&s, pass, false, 1);
	check_triangles(&s, pass, true, 7);
	check_triangles(&s, find(f, "One"), false, 1);
	check_triangles(&s, two, false, 2);
	check_triangles(&s, two, true, 5);
	check_triangles(&s, find(f, "Three"), true, 3);
	const struct node *compute = find(f, "Compute"), *frame = find(f, "Frame");
	assert_int_equal(counter(compute, false, CRUMBS_COUNTER_CS_INVOCATIONS), 24);
	assert_int_equal(counter(compute, true, CRUMBS_COUNTER_IA_PRIMITIVES), 0);
	assert_int_equal(counter(frame, false, CRUMBS_COUNTER_IA_PRIMITIVES), 0);
	assert_int_equal(counter(frame, true, CRUMBS_COUNTER_CS_INVOCATIONS), 24);
	check_triangles(&s, frame, true, 7);
	double fpp = 0, per = 0, reuse = 0;
	uint64_t culled = 1;
	assert_true(node_fragments_per_pixel(pass, true, &fpp));
	assert_true(fpp == 7.0 * (double)s.fragments / (W * H));
	assert_true(node_fragments_per_pixel(find(f, "Three"), false, &fpp));
	assert_true(fpp == 3.0 * (double)s.fragments / (W * H));
	assert_true(node_invocations_per_dispatch(compute, true, &per));
	assert_true(per == 24.0);
	assert_true(node_vertex_reuse(pass, true, &reuse));
	/* lavapipe shades every vertex; other devices may shade fewer. */
	assert_true(reuse > 0.0 && reuse <= 1.0);
	assert_true(node_culled_primitives(pass, true, &culled));
	assert_int_equal(culled, 0);
	reader_free(c);
	scene_destroy(&s);
}

/* A scope begun on one command buffer and ended on the next counts the
 * work of both; each command buffer's own scopes theirs. */
static void across_command_buffers(void **state)
{
	(void)state;
	struct scene s;
	scene_init(&s);
	start_capture(&s);
	VkCommandBuffer first = vkt_begin(&s.t);
	crumbs_cmd *h = crumbs_cmd_begin(s.t.crumbs, first, s.t.queue);
	crumbs_scope_begin(h, 0, "Span");
	pass_begin(&s, h, first, false);
	triangles(h, first, 1);
	pass_end(h, first);
	submit_end(&s, first, h);
	VkCommandBuffer second = vkt_begin(&s.t);
	h = crumbs_cmd_begin(s.t.crumbs, second, s.t.queue);
	pass_begin(&s, h, second, false);
	crumbs_scope_begin(h, 1, "Inner");
	triangles(h, second, 2);
	crumbs_scope_end(h);
	pass_end(h, second);
	crumbs_scope_end(h);
	submit_end(&s, second, h);

	reader *c;
	const struct frame *f = capture_done(&s, &c);
	const struct node *span = find(f, "Span");
	check_triangles(&s, span, false, 1);
	check_triangles(&s, span, true, 3);
	check_triangles(&s, find(f, "Inner"), false, 2);
	reader_free(c);
	scene_destroy(&s);
}

/* A secondary recorded inside the render pass, executed in a pass of
 * secondaries: its scopes count, and the primary's scope around them
 * holds their counts. */
static void secondaries(void **state)
{
	(void)state;
	struct scene s;
	scene_init(&s);
	start_capture(&s);
	VkCommandBufferAllocateInfo ai = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, NULL,
					   s.t.pool, VK_COMMAND_BUFFER_LEVEL_SECONDARY, 1 };
	VkCommandBuffer sec;
	CHECK(vkAllocateCommandBuffers(s.t.device, &ai, &sec));
	VkCommandBufferInheritanceInfo inherit = {
		VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO, NULL, s.pass, 0, s.framebuffer,
		VK_FALSE, 0, 0 };
	VkCommandBufferBeginInfo bi = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, NULL,
					VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT |
					VK_COMMAND_BUFFER_USAGE_RENDER_PASS_CONTINUE_BIT, &inherit };
	CHECK(vkBeginCommandBuffer(sec, &bi));
	crumbs_cmd *hs = crumbs_cmd_begin(s.t.crumbs, sec, s.t.queue);
	vkCmdBindPipeline(sec, VK_PIPELINE_BIND_POINT_GRAPHICS, s.draw);
	triangles(hs, sec, 1);
	crumbs_scope_begin(hs, 2, "In Secondary");
	triangles(hs, sec, 2);
	crumbs_scope_end(hs);
	crumbs_cmd_end(hs);
	CHECK(vkEndCommandBuffer(sec));

	VkCommandBuffer cb = vkt_begin(&s.t);
	crumbs_cmd *h = crumbs_cmd_begin(s.t.crumbs, cb, s.t.queue);
	crumbs_scope_begin(h, 1, "Around");
	pass_begin(&s, h, cb, true);
	vkCmdExecuteCommands(cb, 1, &sec);
	crumbs_cmd_execute(h, 1, &sec);
	pass_end(h, cb);
	crumbs_scope_end(h);
	submit_end(&s, cb, h);

	reader *c;
	const struct frame *f = capture_done(&s, &c);
	const struct node *around = find(f, "Around");
	check_triangles(&s, around, false, 1);
	check_triangles(&s, around, true, 3);
	check_triangles(&s, find(f, "In Secondary"), false, 2);
	reader_free(c);
	scene_destroy(&s);
}

/*
 * Where no query can be placed, the counts are unknown, not low: a
 * multiview pass's contents, the primary's work after secondaries it
 * executes outside a render pass, and a secondary crumbs did not record.
 * The scopes around them are unknown inclusive, known exclusive.
 */
static void unknown(void **state)
{
	(void)state;
	struct scene s;
	scene_init(&s);
	start_capture(&s);
	VkCommandBufferAllocateInfo ai = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, NULL,
					   s.t.pool, VK_COMMAND_BUFFER_LEVEL_SECONDARY, 2 };
	VkCommandBuffer sec[2];
	CHECK(vkAllocateCommandBuffers(s.t.device, &ai, sec));
	VkCommandBufferInheritanceInfo inherit = {
		VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO, NULL, VK_NULL_HANDLE, 0,
		VK_NULL_HANDLE, VK_FALSE, 0, 0 };
	VkCommandBufferBeginInfo bi = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, NULL,
					VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT, &inherit };
	/* One crumbs records, one it does not; both dispatch. */
	for (int i = 0; i < 2; i++) {
		CHECK(vkBeginCommandBuffer(sec[i], &bi));
		crumbs_cmd *hs = i == 0 ? crumbs_cmd_begin(s.t.crumbs, sec[i], s.t.queue) : NULL;
		vkCmdBindPipeline(sec[i], VK_PIPELINE_BIND_POINT_COMPUTE, s.dispatch);
		vkCmdDispatch(sec[i], 2, 1, 1);
		if (hs)
			crumbs_cmd_end(hs);
		CHECK(vkEndCommandBuffer(sec[i]));
	}

	VkCommandBuffer cb = vkt_begin(&s.t);
	crumbs_cmd *h = crumbs_cmd_begin(s.t.crumbs, cb, s.t.queue);
	crumbs_scope_begin(h, 0, "Outer");
	crumbs_scope_begin(h, 1, "Multiview");
	/* A pass told to be multiview (the test's has one view; crumbs
	 * goes by what it is told). */
	crumbs_pass_edge(h, CRUMBS_PASS_BEGINNING, W, H);
	VkClearValue clear = { { { 0, 0, 0, 1 } } };
	VkRenderPassBeginInfo rb = { VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO, NULL, s.pass,
				     s.framebuffer, { { 0, 0 }, { W, H } }, 1, &clear };
	vkCmdBeginRenderPass(cb, &rb, VK_SUBPASS_CONTENTS_INLINE);
	crumbs_pass_edge(h, CRUMBS_PASS_BEGUN_MULTIVIEW, 0, 0);
	vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, s.draw);
	triangles(h, cb, 1);
	pass_end(h, cb);
	crumbs_scope_end(h);
	crumbs_scope_begin(h, 1, "Executes");
	crumbs_cmd_execute(h, 1, &sec[0]);
	vkCmdExecuteCommands(cb, 1, &sec[0]);
	crumbs_scope_end(h);
	crumbs_scope_begin(h, 1, "Unrecorded");
	crumbs_cmd_execute(h, 1, &sec[1]);
	vkCmdExecuteCommands(cb, 1, &sec[1]);
	crumbs_scope_end(h);
	crumbs_scope_begin(h, 1, "Known");
	pass_begin(&s, h, cb, false);
	triangles(h, cb, 1);
	pass_end(h, cb);
	crumbs_scope_end(h);
	crumbs_scope_end(h);
	submit_end(&s, cb, h);

	reader *c;
	const struct frame *f = capture_done(&s, &c);
	const char *const unknown_names[] = { "Multiview", "Executes", "Unrecorded" };
	for (int i = 0; i < 3; i++) {
		const struct node *n = find(f, unknown_names[i]);
		assert_true(node_counters_unknown(n, false));
		assert_true(node_counters_unknown(n, true));
		uint64_t v;
		assert_false(node_counter(n, true, CRUMBS_COUNTER_IA_PRIMITIVES, &v));
	}
	const struct node *outer = find(f, "Outer");
	assert_false(node_counters_unknown(outer, false));
	assert_true(node_counters_unknown(outer, true));
	check_triangles(&s, find(f, "Known"), true, 1);
	reader_free(c);
	scene_destroy(&s);
}

/* One frame of a run: a scope of two triangles and one dispatch. */
static void run_frame(struct scene *s)
{
	VkCommandBuffer cb = vkt_begin(&s->t);
	crumbs_cmd *h = crumbs_cmd_begin(s->t.crumbs, cb, s->t.queue);
	crumbs_scope_begin(h, 1, "Draw");
	pass_begin(s, h, cb, false);
	triangles(h, cb, 2);
	pass_end(h, cb);
	crumbs_scope_end(h);
	crumbs_scope_begin(h, 1, "Compute");
	vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, s->dispatch);
	vkCmdDispatch(cb, 5, 1, 1);
	crumbs_scope_end(h);
	submit_end(s, cb, h);
	/* lavapipe is slow: a GPU frames behind would have frames of the
	 * run left out. */
	CHECK(vkQueueWaitIdle(s->t.queue));
	crumbs_frame(s->t.crumbs);
}

/* A run counts only when asked (crumbs_desc.counters 1), and then every
 * frame's scopes have their counts, each frame in its set's share of the
 * queries; else no frame has any. */
static void runs(void **state)
{
	(void)state;
	for (int on = 0; on < 2; on++) {
		struct scene s;
		struct crumbs_desc desc = { .counters = on };
		scene_init_with(&s, &desc);
		assert_int_equal(crumbs_record(s.t.crumbs, 1, 12, 1), CRUMBS_OK);
		for (int n = 0; n < 15; n++)
			run_frame(&s);
		reader *c;
		struct analyze_error e;
		const struct frame *f;
		assert_int_equal(reader_open_file(vkt_finish_capture(&s.t, NULL), &c, &e), CRUMBS_OK);
		unsigned frames = 0;
		while (reader_next_frame(c, &f, &e) == CRUMBS_OK && f) {
			frames++;
			const struct node *draw = find(f, "Draw"), *compute = find(f, "Compute");
			if (!on) {
				assert_null(draw->counters);
				assert_null(compute->counters);
				continue;
			}
			check_triangles(&s, draw, true, 2);
			assert_int_equal(counter(compute, true, CRUMBS_COUNTER_CS_INVOCATIONS), 5);
		}
		assert_int_equal(frames, 12);
		reader_free(c);
		scene_destroy(&s);
	}
}

/* ------------------------------------------------------------------------ */
/* The sample renderer                                                      */
/* ------------------------------------------------------------------------ */

static int run(char *const argv[])
{
	pid_t pid;
	int status;
	const char *asan = getenv("CRUMBS_RENDERER_ASAN_OPTIONS");
	if (asan)
		setenv("ASAN_OPTIONS", asan, 1);
	if (posix_spawn(&pid, argv[0], NULL, NULL, argv, environ) != 0)
		fail_msg("cannot run %s", argv[0]);
	if (waitpid(pid, &status, 0) != pid)
		fail_msg("cannot wait for %s", argv[0]);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* Each scope that counted its draws (crumbs_draws: triangles and their
 * indices) must have as many input-assembly primitives, and three
 * vertices each; returns how many it checked. */
static unsigned check_draws(const struct node *n)
{
	unsigned checked = 0;
	for (const struct node *c = n->child; c; c = c->next) {
		if (c->exclusive.draws) {
			assert_false(c->exclusive.unknown);
			assert_int_equal(counter(c, false, CRUMBS_COUNTER_IA_PRIMITIVES),
					 c->exclusive.prims);
			assert_int_equal(counter(c, false, CRUMBS_COUNTER_IA_VERTICES),
					 3 * c->exclusive.prims);
			/* Each vertex shaded at least once, no more than each
			 * index asks. */
			uint64_t vs = counter(c, false, CRUMBS_COUNTER_VS_INVOCATIONS);
			assert_true(vs >= c->exclusive.verts || vs == 0);
			assert_true(vs <= 3 * c->exclusive.prims);
			checked++;
		}
		assert_int_equal(counter(c, true, CRUMBS_COUNTER_IA_PRIMITIVES), c->inclusive.prims);
		checked += check_draws(c);
	}
	return checked;
}

static void renderer_capture(const char *secondaries)
{
	char dir[] = "/tmp/crumbs-counters-XXXXXX";
	assert_non_null(mkdtemp(dir));
	const char *renderer = getenv("CRUMBS_RENDERER");
	char *argv[] = { (char *)(uintptr_t)(renderer ? renderer : "build/sample-renderer"),
			 (char[]){ "--validate" }, (char[]){ "--quiet" }, (char[]){ "--frames" },
			 (char[]){ "4" }, (char[]){ "--capture-frame" }, (char[]){ "2" },
			 (char[]){ "--capture-dir" }, dir, (char[]){ "--async-compute" },
			 (char[]){ "off" }, (char[]){ "--shadow-secondaries" },
			 (char *)(uintptr_t)secondaries, (char[]){ "--size" }, (char[]){ "320x192" },
			 NULL };
	assert_int_equal(run(argv), 0);
	char path[128];
	snprintf(path, sizeof(path), "%s/sample-renderer-frame-2.crumbs", dir);
	reader *c;
	const struct frame *f = vkt_read(path, &c);
	const struct node *root = f->queues[0].root;
	const struct node *frame = vkt_find(root, "Frame 2");
	assert_non_null(frame);
	assert_true(check_draws(frame) >= 8);
	assert_false(node_counters_unknown(frame, true));
	/* The lighting: one invocation a pixel, in 16 x 16 tiles; the tone
	 * curve one a pixel, in 8 x 8 groups. */
	const struct node *lighting = vkt_find(frame, "Tiled Deferred Lighting");
	assert_non_null(lighting);
	assert_int_equal(counter(lighting, true, CRUMBS_COUNTER_CS_INVOCATIONS), 320 * 192);
	const struct node *curve = vkt_find(frame, "Tone Curve");
	assert_non_null(curve);
	assert_int_equal(counter(curve, true, CRUMBS_COUNTER_CS_INVOCATIONS), 320 * 192);
	/* The base pass shades fragments over its render area. */
	const struct node *base = vkt_find(frame, "Base Pass");
	double fpp = 0;
	assert_true(node_fragments_per_pixel(base, true, &fpp));
	assert_true(fpp > 0);
	reader_free(c);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	assert_int_equal(system(path), 0);
}

/* Leaf events' counters under the layer: each draw's input-assembly
 * primitives are those its call drew, each dispatch's invocations are
 * counted, and what they sum to is their scope's; returns how many leaves
 * it checked. */
static unsigned check_leaves(const struct node *n)
{
	unsigned checked = 0;
	uint64_t v;
	for (const struct node *c = n->child; c; c = c->next) {
		if (c->kind == CRUMBS_EVENT_DRAW && !(c->exclusive.unknown & COUNT_PRIMS)) {
			assert_int_equal(counter(c, false, CRUMBS_COUNTER_IA_PRIMITIVES),
					 c->exclusive.prims);
			checked++;
		} else if (c->kind == CRUMBS_EVENT_DISPATCH) {
			assert_true(counter(c, false, CRUMBS_COUNTER_CS_INVOCATIONS) > 0);
			checked++;
		} else if (c->kind == CRUMBS_EVENT_RENDER_PASS && c->child) {
			assert_true(node_fragments_per_pixel(c, true, &(double){ 0 }));
		}
		assert_false(node_counters_unknown(c, true));
		assert_true(node_counter(c, true, CRUMBS_COUNTER_IA_PRIMITIVES, &v));
		checked += check_leaves(c);
	}
	return checked;
}

/* The sample renderer under the layer, which counts for it per draw, per
 * dispatch and per pass, under validation: with `counters` "on" the
 * renderer enabled pipelineStatisticsQuery and hostQueryReset itself;
 * with "off" it enabled neither, and the layer enables them for it. */
static void layer_run(const char *counters)
{
	char dir[] = "/tmp/crumbs-counters-XXXXXX";
	assert_non_null(mkdtemp(dir));
	const char *renderer = getenv("CRUMBS_RENDERER");
	char *argv[] = { (char *)(uintptr_t)(renderer ? renderer : "build/sample-renderer"),
			 (char[]){ "--validate" }, (char[]){ "--quiet" }, (char[]){ "--frames" },
			 (char[]){ "4" }, (char[]){ "--async-compute" }, (char[]){ "off" },
			 (char[]){ "--size" }, (char[]){ "160x96" }, (char[]){ "--counters" },
			 (char *)(uintptr_t)counters, NULL };
	char layer_dir[4096];
	snprintf(layer_dir, sizeof(layer_dir), "%s", argv[0]);
	char *slash = strrchr(layer_dir, '/');
	if (slash)
		*slash = '\0';
	/* After the layer paths already given (the validation layer's, on a
	 * machine where it is not installed). */
	const char *given = getenv("VK_ADD_LAYER_PATH");
	char paths[8192];
	snprintf(paths, sizeof(paths), "%s%s%s", slash ? layer_dir : ".", given ? ":" : "",
		 given ? given : "");
	setenv("VK_ADD_LAYER_PATH", paths, 1);
	setenv("VK_LOADER_LAYERS_ENABLE", "VK_LAYER_CRUMBS_capture", 1);
	setenv("CRUMBS_CAPTURE_FRAME", "2", 1);
	setenv("CRUMBS_CAPTURE_DIR", dir, 1);
	setenv("CRUMBS_LAYER_QUIET", "1", 1);
	int status = run(argv);
	unsetenv("VK_LOADER_LAYERS_ENABLE");
	unsetenv("CRUMBS_CAPTURE_FRAME");
	unsetenv("CRUMBS_CAPTURE_DIR");
	assert_int_equal(status, 0);
	char path[128];
	snprintf(path, sizeof(path), "%s/sample-renderer-frame-2.crumbs", dir);
	reader *c;
	const struct frame *f = vkt_read(path, &c);
	const struct node *frame = vkt_find(f->queues[0].root, "Frame 1");
	assert_non_null(frame);
	assert_true(check_leaves(frame) >= 100);
	assert_false(node_counters_unknown(frame, true));
	reader_free(c);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	assert_int_equal(system(path), 0);
}

static void layer(void **state)
{
	(void)state;
	layer_run("on");
}

static void layer_enables(void **state)
{
	(void)state;
	/* Asked for: on lavapipe the layer enables them only then. */
	setenv("CRUMBS_LAYER_COUNTERS", "1", 1);
	layer_run("off");
	unsetenv("CRUMBS_LAYER_COUNTERS");
}

static void renderer(void **state)
{
	(void)state;
	renderer_capture("off");
}

static void renderer_secondaries(void **state)
{
	(void)state;
	renderer_capture("on");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(nested),
		cmocka_unit_test(across_command_buffers),
		cmocka_unit_test(secondaries),
		cmocka_unit_test(unknown),
		cmocka_unit_test(runs),
		cmocka_unit_test(renderer),
		cmocka_unit_test(renderer_secondaries),
		cmocka_unit_test(layer),
		cmocka_unit_test(layer_enables),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
