/* SPDX-License-Identifier: MIT */
/*
 * test_pipelines.c: pipelines a program does not name, under the crumbs
 * layer (with the validation layer below it): the draws and dispatches
 * they run carry their identity, "pipeline 3f2a" or, where the entry
 * point says more than main, "gblur 9c41"; a named pipeline its name;
 * two runs that create the same pipelines in another order, among other
 * objects, give them the same identities. Render passes without names,
 * classic and dynamic, are named by their attachments' formats and their
 * image's name.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <dirent.h>
#include <dlfcn.h>
#include <libgen.h>
#include <unistd.h>

#include "../../include/crumbs.h"
#include "../../analyze/analyze.h"

#include "pipelines_comp.h"
#include "pipelines_frag.h"
#include "pipelines_gblur.h"
#include "pipelines_vert.h"

#define CHECK(call)                                                             \
	do {                                                                    \
		VkResult r_ = (call);                                           \
		if (r_ != VK_SUCCESS)                                           \
			fail_msg("%s failed: VkResult %d", #call, (int)r_);     \
	} while (0)

static unsigned messages;
static char capture_dir[64];

static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
						 VkDebugUtilsMessageTypeFlagsEXT types,
						 const VkDebugUtilsMessengerCallbackDataEXT *data,
						 void *user)
{
	(void)types, (void)user;
	if (severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) {
		messages++;
		fprintf(stderr, "validation: %s\n", data->pMessage);
	}
	return VK_FALSE;
}

/* The pipelines of a run, in the order of `roles`. */
enum role { PLAIN, SHADED, NAMED, GBLUR, COMPUTE, ROLES };

struct run {
	VkInstance instance;
	VkDebugUtilsMessengerEXT messenger;
	VkDevice device;
	VkQueue queue;
	uint32_t family;
	VkCommandPool pool;
	VkImage image, depth;
	VkDeviceMemory memory, depth_memory;
	VkImageView view, depth_view;
	VkRenderPass pass;
	VkFramebuffer framebuffer;
	VkPipelineLayout layout;
	VkShaderModule modules[4]; /* vert, frag, comp, gblur */
	VkPipeline pipelines[ROLES];
	VkFence fence;
	PFN_vkSetDebugUtilsObjectNameEXT set_name;
};

/* A 64x64 image of that format with its memory and a view of it. */
static void image(struct run *r, VkFormat format, VkImageUsageFlags usage, VkImageAspectFlags aspect,
		  VkImage *out, VkDeviceMemory *memory, VkImageView *view)
{
	VkImageCreateInfo ic = { VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO, NULL, 0, VK_IMAGE_TYPE_2D,
				 format, { 64, 64, 1 }, 1, 1, VK_SAMPLE_COUNT_1_BIT,
				 VK_IMAGE_TILING_OPTIMAL, usage, VK_SHARING_MODE_EXCLUSIVE, 0, NULL,
				 VK_IMAGE_LAYOUT_UNDEFINED };
	CHECK(vkCreateImage(r->device, &ic, NULL, out));
	VkMemoryRequirements req;
	vkGetImageMemoryRequirements(r->device, *out, &req);
	uint32_t type = 0;
	while (!(req.memoryTypeBits & (1u << type)))
		type++;
	VkMemoryAllocateInfo ai = { VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, NULL, req.size, type };
	CHECK(vkAllocateMemory(r->device, &ai, NULL, memory));
	CHECK(vkBindImageMemory(r->device, *out, *memory, 0));
	VkImageViewCreateInfo vc = { VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO, NULL, 0, *out,
				     VK_IMAGE_VIEW_TYPE_2D, format, { 0 }, { aspect, 0, 1, 0, 1 } };
	CHECK(vkCreateImageView(r->device, &vc, NULL, view));
}

static VkShaderModule module(struct run *r, const uint32_t *code, size_t bytes)
{
	VkShaderModuleCreateInfo ci = { VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, NULL, 0, bytes, code };
	VkShaderModule m;
	CHECK(vkCreateShaderModule(r->device, &ci, NULL, &m));
	return m;
}

static void create_device(struct run *r)
{
	const char *layers[] = { "VK_LAYER_CRUMBS_capture", "VK_LAYER_KHRONOS_validation" };
	const char *ext = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
	VkDebugUtilsMessengerCreateInfoEXT mi = {
		VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT, NULL, 0,
		VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
			VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
		VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
			VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT,
		on_message, NULL
	};
	VkApplicationInfo app = { VK_STRUCTURE_TYPE_APPLICATION_INFO, NULL, "crumbs tests", 1,
				  "crumbs", 1, VK_API_VERSION_1_3 };
	VkInstanceCreateInfo ii = { VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, &mi, 0, &app, 2, layers,
				    1, &ext };
	VkResult res = vkCreateInstance(&ii, NULL, &r->instance);
	if (res == VK_ERROR_LAYER_NOT_PRESENT)
		fail_msg("the crumbs layer (VK_ADD_LAYER_PATH) or the validation layer is missing");
	CHECK(res);
	PFN_vkCreateDebugUtilsMessengerEXT create_messenger = (PFN_vkCreateDebugUtilsMessengerEXT)
		vkGetInstanceProcAddr(r->instance, "vkCreateDebugUtilsMessengerEXT");
	CHECK(create_messenger(r->instance, &mi, NULL, &r->messenger));

	VkPhysicalDevice physical;
	uint32_t n = 1;
	res = vkEnumeratePhysicalDevices(r->instance, &n, &physical);
	assert_true((res == VK_SUCCESS || res == VK_INCOMPLETE) && n == 1);
	VkQueueFamilyProperties families[16];
	uint32_t nf = 16;
	vkGetPhysicalDeviceQueueFamilyProperties(physical, &nf, families);
	r->family = UINT32_MAX;
	for (uint32_t i = 0; i < nf && r->family == UINT32_MAX; i++)
		if (families[i].queueFlags & VK_QUEUE_GRAPHICS_BIT)
			r->family = i;
	assert_true(r->family != UINT32_MAX);
	float priority = 1.0f;
	VkDeviceQueueCreateInfo qi = { VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, NULL, 0, r->family,
				       1, &priority };
	VkPhysicalDeviceVulkan13Features f13 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES,
						 .dynamicRendering = VK_TRUE };
	VkDeviceCreateInfo di = { VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &f13, 0, 1, &qi, 0, NULL, 0,
				  NULL, NULL };
	CHECK(vkCreateDevice(physical, &di, NULL, &r->device));
	vkGetDeviceQueue(r->device, r->family, 0, &r->queue);
	VkCommandPoolCreateInfo pi = { VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, NULL, 0, r->family };
	CHECK(vkCreateCommandPool(r->device, &pi, NULL, &r->pool));
	VkFenceCreateInfo fi = { VK_STRUCTURE_TYPE_FENCE_CREATE_INFO, NULL, 0 };
	CHECK(vkCreateFence(r->device, &fi, NULL, &r->fence));

	/* A 64x64 target and a depth buffer, and a render pass that clears
	 * the target. */
	image(r, VK_FORMAT_R8G8B8A8_UNORM, VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT,
	      VK_IMAGE_ASPECT_COLOR_BIT, &r->image, &r->memory, &r->view);
	image(r, VK_FORMAT_D32_SFLOAT, VK_IMAGE_USAGE_DEPTH_STENCIL_ATTACHMENT_BIT,
	      VK_IMAGE_ASPECT_DEPTH_BIT, &r->depth, &r->depth_memory, &r->depth_view);
	r->set_name = (PFN_vkSetDebugUtilsObjectNameEXT)vkGetDeviceProcAddr(r->device,
									  "vkSetDebugUtilsObjectNameEXT");
	assert_non_null(r->set_name);
	VkDebugUtilsObjectNameInfoEXT ni = { VK_STRUCTURE_TYPE_DEBUG_UTILS_OBJECT_NAME_INFO_EXT, NULL,
					     VK_OBJECT_TYPE_IMAGE, (uint64_t)r->image, "Target" };
	CHECK(r->set_name(r->device, &ni));
	VkAttachmentDescription at = { 0, VK_FORMAT_R8G8B8A8_UNORM, VK_SAMPLE_COUNT_1_BIT,
				       VK_ATTACHMENT_LOAD_OP_CLEAR, VK_ATTACHMENT_STORE_OP_STORE,
				       VK_ATTACHMENT_LOAD_OP_DONT_CARE, VK_ATTACHMENT_STORE_OP_DONT_CARE,
				       VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL };
	VkAttachmentReference ref = { 0, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL };
	VkSubpassDescription sp = { 0, VK_PIPELINE_BIND_POINT_GRAPHICS, 0, NULL, 1, &ref, NULL, NULL, 0, NULL };
	VkRenderPassCreateInfo rc = { VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO, NULL, 0, 1, &at, 1, &sp, 0, NULL };
	CHECK(vkCreateRenderPass(r->device, &rc, NULL, &r->pass));
	VkFramebufferCreateInfo fc = { VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO, NULL, 0, r->pass, 1,
				       &r->view, 64, 64, 1 };
	CHECK(vkCreateFramebuffer(r->device, &fc, NULL, &r->framebuffer));
	VkPipelineLayoutCreateInfo lc = { VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, NULL, 0, 0, NULL, 0, NULL };
	CHECK(vkCreatePipelineLayout(r->device, &lc, NULL, &r->layout));
}

static VkPipeline graphics(struct run *r, float shade)
{
	VkSpecializationMapEntry entry = { 0, 0, sizeof(float) };
	VkSpecializationInfo spec = { 1, &entry, sizeof(float), &shade };
	VkPipelineShaderStageCreateInfo stages[2] = {
		{ VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, NULL, 0, VK_SHADER_STAGE_VERTEX_BIT,
		  r->modules[0], "main", NULL },
		{ VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, NULL, 0, VK_SHADER_STAGE_FRAGMENT_BIT,
		  r->modules[1], "main", &spec },
	};
	VkPipelineVertexInputStateCreateInfo vi = { VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO,
						    NULL, 0, 0, NULL, 0, NULL };
	VkPipelineInputAssemblyStateCreateInfo ia = {
		VK_STRUCTURE_TYPE_PIPELINE_INPUT_ASSEMBLY_STATE_CREATE_INFO, NULL, 0,
		VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST, VK_FALSE };
	VkViewport viewport = { 0, 0, 64, 64, 0, 1 };
	VkRect2D scissor = { { 0, 0 }, { 64, 64 } };
	VkPipelineViewportStateCreateInfo vp = { VK_STRUCTURE_TYPE_PIPELINE_VIEWPORT_STATE_CREATE_INFO,
						 NULL, 0, 1, &viewport, 1, &scissor };
	VkPipelineRasterizationStateCreateInfo rs = {
		VK_STRUCTURE_TYPE_PIPELINE_RASTERIZATION_STATE_CREATE_INFO, NULL, 0, VK_FALSE, VK_FALSE,
		VK_POLYGON_MODE_FILL, VK_CULL_MODE_NONE, VK_FRONT_FACE_COUNTER_CLOCKWISE, VK_FALSE, 0, 0, 0, 1 };
	VkPipelineMultisampleStateCreateInfo ms = {
		VK_STRUCTURE_TYPE_PIPELINE_MULTISAMPLE_STATE_CREATE_INFO, NULL, 0, VK_SAMPLE_COUNT_1_BIT,
		VK_FALSE, 0, NULL, VK_FALSE, VK_FALSE };
	VkPipelineColorBlendAttachmentState blend = { .colorWriteMask = 0xf };
	VkPipelineColorBlendStateCreateInfo cb = { VK_STRUCTURE_TYPE_PIPELINE_COLOR_BLEND_STATE_CREATE_INFO,
						   NULL, 0, VK_FALSE, VK_LOGIC_OP_COPY, 1, &blend, { 0 } };
	VkGraphicsPipelineCreateInfo ci = { VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO, NULL, 0, 2,
					    stages, &vi, &ia, NULL, &vp, &rs, &ms, NULL, &cb, NULL,
					    r->layout, r->pass, 0, VK_NULL_HANDLE, -1 };
	VkPipeline p;
	CHECK(vkCreateGraphicsPipelines(r->device, VK_NULL_HANDLE, 1, &ci, NULL, &p));
	return p;
}

static VkPipeline compute(struct run *r, VkShaderModule m, const char *entry)
{
	VkComputePipelineCreateInfo ci = {
		VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO, NULL, 0,
		{ VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, NULL, 0, VK_SHADER_STAGE_COMPUTE_BIT,
		  m, entry, NULL },
		r->layout, VK_NULL_HANDLE, -1
	};
	VkPipeline p;
	CHECK(vkCreateComputePipelines(r->device, VK_NULL_HANDLE, 1, &ci, NULL, &p));
	return p;
}

/* The pipelines, in one order or the other; the second run makes other
 * objects first and between, so that no handle is what it was. */
static void create_pipelines(struct run *r, bool reverse)
{
	VkShaderModule spare = VK_NULL_HANDLE;
	VkPipeline spare_pipeline = VK_NULL_HANDLE;
	if (reverse) {
		spare = module(r, shader_pipelines_comp, sizeof(shader_pipelines_comp));
		r->modules[3] = module(r, shader_pipelines_gblur, sizeof(shader_pipelines_gblur));
		r->modules[2] = module(r, shader_pipelines_comp, sizeof(shader_pipelines_comp));
		r->modules[1] = module(r, shader_pipelines_frag, sizeof(shader_pipelines_frag));
		r->modules[0] = module(r, shader_pipelines_vert, sizeof(shader_pipelines_vert));
		spare_pipeline = compute(r, spare, "main");
		for (int i = ROLES - 1; i >= 0; i--)
			r->pipelines[i] = i == PLAIN || i == NAMED ? graphics(r, 1.0f) :
					  i == SHADED ? graphics(r, 0.5f) :
					  i == GBLUR ? compute(r, r->modules[3], "gblur") :
						       compute(r, r->modules[2], "main");
		vkDestroyPipeline(r->device, spare_pipeline, NULL);
		vkDestroyShaderModule(r->device, spare, NULL);
	} else {
		r->modules[0] = module(r, shader_pipelines_vert, sizeof(shader_pipelines_vert));
		r->modules[1] = module(r, shader_pipelines_frag, sizeof(shader_pipelines_frag));
		r->modules[2] = module(r, shader_pipelines_comp, sizeof(shader_pipelines_comp));
		r->modules[3] = module(r, shader_pipelines_gblur, sizeof(shader_pipelines_gblur));
		r->pipelines[PLAIN] = graphics(r, 1.0f);
		r->pipelines[SHADED] = graphics(r, 0.5f);
		r->pipelines[NAMED] = graphics(r, 1.0f);
		r->pipelines[GBLUR] = compute(r, r->modules[3], "gblur");
		r->pipelines[COMPUTE] = compute(r, r->modules[2], "main");
	}
	VkDebugUtilsObjectNameInfoEXT ni = { VK_STRUCTURE_TYPE_DEBUG_UTILS_OBJECT_NAME_INFO_EXT, NULL,
					     VK_OBJECT_TYPE_PIPELINE, (uint64_t)r->pipelines[NAMED],
					     "Tonemap" };
	CHECK(r->set_name(r->device, &ni));
}

/* One frame: a fenced submission (the program never presents). Frame 1
 * holds the work. */
static void frame(struct run *r, bool work)
{
	VkCommandBuffer cb;
	VkCommandBufferAllocateInfo ai = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, NULL,
					   r->pool, VK_COMMAND_BUFFER_LEVEL_PRIMARY, 1 };
	CHECK(vkAllocateCommandBuffers(r->device, &ai, &cb));
	VkCommandBufferBeginInfo bi = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, NULL,
					VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT, NULL };
	CHECK(vkBeginCommandBuffer(cb, &bi));
	if (work) {
		VkClearValue clear = { { { 0, 0, 0, 1 } } };
		VkRenderPassBeginInfo rb = { VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO, NULL, r->pass,
					     r->framebuffer, { { 0, 0 }, { 64, 64 } }, 1, &clear };
		vkCmdBeginRenderPass(cb, &rb, VK_SUBPASS_CONTENTS_INLINE);
		for (int i = PLAIN; i <= NAMED; i++) {
			vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, r->pipelines[i]);
			vkCmdDraw(cb, 3, 1, 0, 0);
		}
		vkCmdEndRenderPass(cb);
		vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, r->pipelines[GBLUR]);
		vkCmdDispatch(cb, 1, 1, 1);
		vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, r->pipelines[COMPUTE]);
		vkCmdDispatch(cb, 2, 1, 1);
		/* Dynamic rendering into the target, after the pass, and the
		 * depth buffer. */
		VkImageMemoryBarrier to_depth = {
			VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER, NULL, 0,
			VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT, VK_IMAGE_LAYOUT_UNDEFINED,
			VK_IMAGE_LAYOUT_DEPTH_ATTACHMENT_OPTIMAL, VK_QUEUE_FAMILY_IGNORED,
			VK_QUEUE_FAMILY_IGNORED, r->depth, { VK_IMAGE_ASPECT_DEPTH_BIT, 0, 1, 0, 1 } };
		VkImageMemoryBarrier after = {
			VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER, NULL, VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT,
			VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL,
			VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL, VK_QUEUE_FAMILY_IGNORED,
			VK_QUEUE_FAMILY_IGNORED, r->image, { VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1 } };
		vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT,
				     VK_PIPELINE_STAGE_EARLY_FRAGMENT_TESTS_BIT |
					     VK_PIPELINE_STAGE_LATE_FRAGMENT_TESTS_BIT,
				     0, 0, NULL, 0, NULL, 1, &to_depth);
		vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT,
				     VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT, 0, 0, NULL, 0, NULL,
				     1, &after);
		VkRenderingAttachmentInfo color = {
			VK_STRUCTURE_TYPE_RENDERING_ATTACHMENT_INFO, NULL, r->view,
			VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL, 0, VK_NULL_HANDLE,
			VK_IMAGE_LAYOUT_UNDEFINED, VK_ATTACHMENT_LOAD_OP_LOAD, VK_ATTACHMENT_STORE_OP_STORE,
			{ { { 0 } } } };
		VkRenderingAttachmentInfo depth = {
			VK_STRUCTURE_TYPE_RENDERING_ATTACHMENT_INFO, NULL, r->depth_view,
			VK_IMAGE_LAYOUT_DEPTH_ATTACHMENT_OPTIMAL, 0, VK_NULL_HANDLE,
			VK_IMAGE_LAYOUT_UNDEFINED, VK_ATTACHMENT_LOAD_OP_CLEAR,
			VK_ATTACHMENT_STORE_OP_DONT_CARE, { .depthStencil = { 1.0f, 0 } } };
		VkRenderingInfo ri = { VK_STRUCTURE_TYPE_RENDERING_INFO, NULL, 0, { { 0, 0 }, { 32, 32 } },
				       1, 0, 1, &color, &depth, NULL };
		vkCmdBeginRendering(cb, &ri);
		vkCmdEndRendering(cb);
	}
	CHECK(vkEndCommandBuffer(cb));
	VkSubmitInfo si = { VK_STRUCTURE_TYPE_SUBMIT_INFO, NULL, 0, NULL, NULL, 1, &cb, 0, NULL };
	CHECK(vkQueueSubmit(r->queue, 1, &si, r->fence));
	CHECK(vkWaitForFences(r->device, 1, &r->fence, VK_TRUE, UINT64_MAX));
	CHECK(vkResetFences(r->device, 1, &r->fence));
	vkFreeCommandBuffers(r->device, r->pool, 1, &cb);
}

static void destroy(struct run *r)
{
	CHECK(vkDeviceWaitIdle(r->device));
	for (int i = 0; i < ROLES; i++)
		vkDestroyPipeline(r->device, r->pipelines[i], NULL);
	for (int i = 0; i < 4; i++)
		vkDestroyShaderModule(r->device, r->modules[i], NULL);
	vkDestroyPipelineLayout(r->device, r->layout, NULL);
	vkDestroyFramebuffer(r->device, r->framebuffer, NULL);
	vkDestroyRenderPass(r->device, r->pass, NULL);
	vkDestroyImageView(r->device, r->view, NULL);
	vkDestroyImage(r->device, r->image, NULL);
	vkFreeMemory(r->device, r->memory, NULL);
	vkDestroyImageView(r->device, r->depth_view, NULL);
	vkDestroyImage(r->device, r->depth, NULL);
	vkFreeMemory(r->device, r->depth_memory, NULL);
	vkDestroyFence(r->device, r->fence, NULL);
	vkDestroyCommandPool(r->device, r->pool, NULL);
	/* The capture is written whole before this returns. */
	vkDestroyDevice(r->device, NULL);
	PFN_vkDestroyDebugUtilsMessengerEXT destroy_messenger = (PFN_vkDestroyDebugUtilsMessengerEXT)
		vkGetInstanceProcAddr(r->instance, "vkDestroyDebugUtilsMessengerEXT");
	destroy_messenger(r->instance, r->messenger, NULL);
	vkDestroyInstance(r->instance, NULL);
}

/* The names of the draws and dispatches of the capture in capture_dir,
 * by role, into names[ROLES], and of its two render passes into
 * passes[2]; the capture is removed. */
static void read_names(char names[ROLES][128], char passes[2][128])
{
	DIR *dir = opendir(capture_dir);
	assert_non_null(dir);
	char path[sizeof(capture_dir) + 256 + 2] = "";
	struct dirent *e;
	while ((e = readdir(dir)))
		if (strstr(e->d_name, ".crumbs"))
			snprintf(path, sizeof(path), "%s/%s", capture_dir, e->d_name);
	closedir(dir);
	if (!*path)
		fail_msg("no capture in %s", capture_dir);

	reader *c;
	const struct frame *f;
	struct analyze_error err;
	assert_int_equal(reader_open_file(path, &c, &err), CRUMBS_OK);
	assert_int_equal(reader_next_frame(c, &f, &err), CRUMBS_OK);
	assert_non_null(f);
	int k = 0, p = 0;
	/* Preorder: the render pass, its three draws, the two dispatches. */
	for (uint32_t q = 0; q < f->queue_count; q++) {
		const struct node *n = f->queues[q].root->child;
		while (n) {
			if ((n->kind == CRUMBS_EVENT_DRAW || n->kind == CRUMBS_EVENT_DISPATCH) && k < ROLES)
				snprintf(names[k++], 128, "%.*s", (int)n->name_len, n->name);
			if (n->kind == CRUMBS_EVENT_RENDER_PASS && p < 2)
				snprintf(passes[p++], 128, "%.*s", (int)n->name_len, n->name);
			if (n->child) {
				n = n->child;
				continue;
			}
			while (n->parent && !n->next && !(n->parent->flags & NODE_QUEUE_ROOT))
				n = n->parent;
			n = n->next;
		}
	}
	reader_free(c);
	assert_int_equal(k, ROLES);
	assert_int_equal(p, 2);
	assert_int_equal(remove(path), 0);
}

static void run_once(bool reverse, char names[ROLES][128], char passes[2][128])
{
	struct run r;
	memset(&r, 0, sizeof(r));
	create_device(&r);
	create_pipelines(&r, reverse);
	frame(&r, false);
	frame(&r, true);
	frame(&r, false);
	destroy(&r);
	read_names(names, passes);
}

/* The suffix after " · " of a name. */
static const char *suffix(const char *name)
{
	const char *s = strstr(name, " \u00b7 ");
	return s ? s + strlen(" \u00b7 ") : "";
}

static bool is_hex4(const char *s)
{
	for (int i = 0; i < 4; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return s[4] == '\0';
}

static void identities(void **state)
{
	(void)state;
	char first[ROLES][128], second[ROLES][128], passes[2][128];
	run_once(false, first, passes);
	for (int i = 0; i < ROLES; i++)
		printf("# %s\n", first[i]);
	assert_memory_equal(first[PLAIN], "Draw 3 vertices \u00b7 pipeline ", strlen("Draw 3 vertices \u00b7 pipeline "));
	assert_true(is_hex4(suffix(first[PLAIN]) + strlen("pipeline ")));
	assert_memory_equal(first[SHADED], "Draw 3 vertices \u00b7 pipeline ", strlen("Draw 3 vertices \u00b7 pipeline "));
	/* Another specialization constant, another pipeline. */
	assert_string_not_equal(first[PLAIN], first[SHADED]);
	assert_string_equal(first[NAMED], "Draw 3 vertices \u00b7 Tonemap");
	/* The entry point names it where it says more than main. */
	assert_memory_equal(first[GBLUR], "Dispatch 1x1x1 \u00b7 gblur ", strlen("Dispatch 1x1x1 \u00b7 gblur "));
	assert_true(is_hex4(suffix(first[GBLUR]) + strlen("gblur ")));
	assert_memory_equal(first[COMPUTE], "Dispatch 2x1x1 \u00b7 pipeline ", strlen("Dispatch 2x1x1 \u00b7 pipeline "));

	/* Again, created in the other order among other objects. */
	run_once(true, second, passes);
	for (int i = 0; i < ROLES; i++)
		assert_string_equal(first[i], second[i]);
	/* Render passes by their attachments' formats and image's name. */
	assert_string_equal(passes[0], "Render Pass 64x64 (rgba8) \u00b7 Target");
	assert_string_equal(passes[1], "Render Pass 32x32 (rgba8 + d32) \u00b7 Target");
	assert_int_equal(messages, 0);
}

int main(int argc, char **argv)
{
	(void)argc;
	/* The layer beside the test's build: BUILD/tests/vk_test_pipelines
	 * finds BUILD/VkLayer_crumbs.json. */
	char self[4096];
	snprintf(self, sizeof(self), "%s", argv[0]);
	char *build = dirname(dirname(self));
	setenv("VK_ADD_LAYER_PATH", build, 1);
	setenv("CRUMBS_CAPTURE_FRAME", "1", 1);
	setenv("CRUMBS_LAYER_QUIET", "1", 1);
	snprintf(capture_dir, sizeof(capture_dir), "/tmp/crumbs-test-XXXXXX");
	if (!mkdtemp(capture_dir))
		return 1;
	setenv("CRUMBS_CAPTURE_DIR", capture_dir, 1);
	/* lavapipe keeps some of what it compiles these pipelines with until
	 * the process ends; unloaded with the instance, that reads as a leak
	 * of an unknown module. Kept loaded, LeakSanitizer sees it held and
	 * still checks the layer's own memory. Without lavapipe (a GPU), no
	 * matter. */
	(void)dlopen("libvulkan_lvp.so", RTLD_NOW | RTLD_NODELETE);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(identities),
	};
	int failed = cmocka_run_group_tests(tests, NULL, NULL);
	rmdir(capture_dir);
	return failed;
}
