/* SPDX-License-Identifier: MIT */
/*
 * ahead.c: a Vulkan program that knows nothing of crumbs and records each
 * frame's command buffer ahead of the frame, as Zink does: the command
 * buffer of frame F + A is begun with ONE_TIME_SUBMIT during frame F,
 * before frame F's fenced submission (which ends the layer's frame F),
 * and its render pass of --draws N small quads is recorded and submitted
 * in frame F + A. --ahead A is 1 (Zink's way, the default) or more;
 * --early E records the pass's first E draws where the command buffer is
 * begun, in the earlier frame. It never presents: each frame ends at its
 * fenced submission (layer/LAYER.md). --hold H begins H more command
 * buffers in frame 5, one draw each, and submits them in the last frame,
 * before its own: more than a run has queries to keep for them.
 * --statistics enables pipelineStatisticsQuery (and not hostQueryReset),
 * as vkd3d does. With --validate,
 * the Khronos validation layer is enabled and any message it prints fails
 * the run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vulkan/vulkan.h>

#include "ahead.frag.h"
#include "ahead.vert.h"

#define SIZE 64
#define MAX_AHEAD 12
#define MAX_HOLD 1024
#define HOLD_FRAME 5
#define HOLD_BATCH 50

static unsigned messages;

static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
						 VkDebugUtilsMessageTypeFlagsEXT types,
						 const VkDebugUtilsMessengerCallbackDataEXT *data,
						 void *user)
{
	(void)severity, (void)types, (void)user;
	fprintf(stderr, "ahead: validation: %s\n", data->pMessage);
	messages++;
	return VK_FALSE;
}

static int fail(const char *what, VkResult r)
{
	fprintf(stderr, "ahead: %s failed (VkResult %d)\n", what, (int)r);
	return 1;
}

#define TRY(call)                                      \
	do {                                           \
		VkResult r_ = (call);                  \
		if (r_ != VK_SUCCESS)                  \
			return fail(#call, r_);        \
	} while (0)

struct program {
	VkInstance instance;
	VkDebugUtilsMessengerEXT messenger;
	VkPhysicalDevice physical;
	VkDevice device;
	VkQueue queue;
	VkCommandPool pool;
	VkImage image;
	VkDeviceMemory memory;
	VkImageView view;
	VkRenderPass pass;
	VkFramebuffer framebuffer;
	VkShaderModule vert, frag;
	VkPipelineLayout layout;
	VkPipeline pipeline;
	/* Frame F records into cbs[F % (ahead + 1)]: the frames from F to
	 * F + ahead have theirs begun at once. */
	VkCommandBuffer cbs[MAX_AHEAD + 1];
	VkFence fences[MAX_AHEAD + 1];
	int submitted[MAX_AHEAD + 1];
	int in_pass[MAX_AHEAD + 1];
	VkCommandBuffer held[MAX_HOLD];
};

static int make_device(struct program *p, int validate, int statistics)
{
	const char *layer = "VK_LAYER_KHRONOS_validation";
	const char *ext = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
	VkDebugUtilsMessengerCreateInfoEXT mi = {
		VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT, NULL, 0,
		VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
			VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
		VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
			VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
		on_message, NULL
	};
	VkApplicationInfo app = { VK_STRUCTURE_TYPE_APPLICATION_INFO, NULL, "ahead", 1, NULL, 0,
				  VK_API_VERSION_1_1 };
	VkInstanceCreateInfo ii = { VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, validate ? &mi : NULL, 0,
				    &app, validate ? 1 : 0, &layer, validate ? 1 : 0, &ext };
	TRY(vkCreateInstance(&ii, NULL, &p->instance));
	PFN_vkCreateDebugUtilsMessengerEXT create_messenger = (PFN_vkCreateDebugUtilsMessengerEXT)
		vkGetInstanceProcAddr(p->instance, "vkCreateDebugUtilsMessengerEXT");
	if (validate && create_messenger)
		TRY(create_messenger(p->instance, &mi, NULL, &p->messenger));

	uint32_t count = 1;
	VkResult er = vkEnumeratePhysicalDevices(p->instance, &count, &p->physical);
	if ((er != VK_SUCCESS && er != VK_INCOMPLETE) || count == 0)
		return fail("vkEnumeratePhysicalDevices", er);
	VkQueueFamilyProperties families[16];
	uint32_t nf = 16, family = 0;
	vkGetPhysicalDeviceQueueFamilyProperties(p->physical, &nf, families);
	while (family < nf && !(families[family].queueFlags & VK_QUEUE_GRAPHICS_BIT))
		family++;
	if (family == nf)
		return fail("finding a graphics queue family", VK_ERROR_FEATURE_NOT_PRESENT);
	const float priority = 1.0f;
	VkDeviceQueueCreateInfo qi = { VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, NULL, 0, family, 1,
				       &priority };
	VkPhysicalDeviceFeatures features;
	memset(&features, 0, sizeof(features));
	features.pipelineStatisticsQuery = VK_TRUE;
	VkDeviceCreateInfo ci = { VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, NULL, 0, 1, &qi, 0, NULL,
				  0, NULL, statistics ? &features : NULL };
	TRY(vkCreateDevice(p->physical, &ci, NULL, &p->device));
	vkGetDeviceQueue(p->device, family, 0, &p->queue);
	VkCommandPoolCreateInfo pi = { VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, NULL,
				       VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT, family };
	TRY(vkCreateCommandPool(p->device, &pi, NULL, &p->pool));
	VkCommandBufferAllocateInfo ai = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, NULL,
					   p->pool, VK_COMMAND_BUFFER_LEVEL_PRIMARY, MAX_AHEAD + 1 };
	TRY(vkAllocateCommandBuffers(p->device, &ai, p->cbs));
	VkFenceCreateInfo fi = { VK_STRUCTURE_TYPE_FENCE_CREATE_INFO, NULL, 0 };
	for (int i = 0; i <= MAX_AHEAD; i++)
		TRY(vkCreateFence(p->device, &fi, NULL, &p->fences[i]));
	return 0;
}

/* The image the quads are drawn into, its render pass and framebuffer. */
static int make_target(struct program *p)
{
	const VkFormat format = VK_FORMAT_R8G8B8A8_UNORM;
	VkImageCreateInfo ii = { VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO, NULL, 0, VK_IMAGE_TYPE_2D,
				 format, { SIZE, SIZE, 1 }, 1, 1, VK_SAMPLE_COUNT_1_BIT,
				 VK_IMAGE_TILING_OPTIMAL, VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT,
				 VK_SHARING_MODE_EXCLUSIVE, 0, NULL, VK_IMAGE_LAYOUT_UNDEFINED };
	TRY(vkCreateImage(p->device, &ii, NULL, &p->image));
	VkMemoryRequirements req;
	vkGetImageMemoryRequirements(p->device, p->image, &req);
	VkPhysicalDeviceMemoryProperties mp;
	vkGetPhysicalDeviceMemoryProperties(p->physical, &mp);
	uint32_t type = 0;
	while (type < mp.memoryTypeCount && !(req.memoryTypeBits & (1u << type)))
		type++;
	VkMemoryAllocateInfo mi = { VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, NULL, req.size, type };
	TRY(vkAllocateMemory(p->device, &mi, NULL, &p->memory));
	TRY(vkBindImageMemory(p->device, p->image, p->memory, 0));
	VkImageViewCreateInfo vi = { VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO, NULL, 0, p->image,
				     VK_IMAGE_VIEW_TYPE_2D, format, { 0, 0, 0, 0 },
				     { VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1 } };
	TRY(vkCreateImageView(p->device, &vi, NULL, &p->view));
	VkAttachmentDescription color = { 0, format, VK_SAMPLE_COUNT_1_BIT,
					  VK_ATTACHMENT_LOAD_OP_CLEAR, VK_ATTACHMENT_STORE_OP_STORE,
					  VK_ATTACHMENT_LOAD_OP_DONT_CARE,
					  VK_ATTACHMENT_STORE_OP_DONT_CARE, VK_IMAGE_LAYOUT_UNDEFINED,
					  VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL };
	VkAttachmentReference ref = { 0, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL };
	VkSubpassDescription sub = { 0, VK_PIPELINE_BIND_POINT_GRAPHICS, 0, NULL, 1, &ref, NULL,
				     NULL, 0, NULL };
	VkRenderPassCreateInfo rci = { VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO, NULL, 0, 1, &color,
				       1, &sub, 0, NULL };
	TRY(vkCreateRenderPass(p->device, &rci, NULL, &p->pass));
	VkFramebufferCreateInfo fci = { VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO, NULL, 0, p->pass,
					1, &p->view, SIZE, SIZE, 1 };
	TRY(vkCreateFramebuffer(p->device, &fci, NULL, &p->framebuffer));
	return 0;
}

static int make_pipeline(struct program *p)
{
	VkShaderModuleCreateInfo vs = { VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, NULL, 0,
					sizeof(shader_ahead_vert), shader_ahead_vert };
	VkShaderModuleCreateInfo fs = { VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, NULL, 0,
					sizeof(shader_ahead_frag), shader_ahead_frag };
	TRY(vkCreateShaderModule(p->device, &vs, NULL, &p->vert));
	TRY(vkCreateShaderModule(p->device, &fs, NULL, &p->frag));
	VkPipelineLayoutCreateInfo li = { VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, NULL, 0, 0,
					  NULL, 0, NULL };
	TRY(vkCreatePipelineLayout(p->device, &li, NULL, &p->layout));
	VkPipelineShaderStageCreateInfo stages[2] = {
		{ VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, NULL, 0,
		  VK_SHADER_STAGE_VERTEX_BIT, p->vert, "main", NULL },
		{ VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, NULL, 0,
		  VK_SHADER_STAGE_FRAGMENT_BIT, p->frag, "main", NULL },
	};
	VkPipelineVertexInputStateCreateInfo input = {
		VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO, NULL, 0, 0, NULL, 0, NULL
	};
	VkPipelineInputAssemblyStateCreateInfo assembly = {
		VK_STRUCTURE_TYPE_PIPELINE_INPUT_ASSEMBLY_STATE_CREATE_INFO, NULL, 0,
		VK_PRIMITIVE_TOPOLOGY_TRIANGLE_STRIP, VK_FALSE
	};
	VkViewport viewport = { 0, 0, SIZE, SIZE, 0, 1 };
	VkRect2D scissor = { { 0, 0 }, { SIZE, SIZE } };
	VkPipelineViewportStateCreateInfo vp = {
		VK_STRUCTURE_TYPE_PIPELINE_VIEWPORT_STATE_CREATE_INFO, NULL, 0, 1, &viewport, 1, &scissor
	};
	VkPipelineRasterizationStateCreateInfo raster = {
		VK_STRUCTURE_TYPE_PIPELINE_RASTERIZATION_STATE_CREATE_INFO, NULL, 0, VK_FALSE, VK_FALSE,
		VK_POLYGON_MODE_FILL, VK_CULL_MODE_NONE, VK_FRONT_FACE_COUNTER_CLOCKWISE, VK_FALSE,
		0, 0, 0, 1
	};
	VkPipelineMultisampleStateCreateInfo ms = {
		VK_STRUCTURE_TYPE_PIPELINE_MULTISAMPLE_STATE_CREATE_INFO, NULL, 0, VK_SAMPLE_COUNT_1_BIT,
		VK_FALSE, 0, NULL, VK_FALSE, VK_FALSE
	};
	VkPipelineColorBlendAttachmentState blend = { VK_FALSE, 0, 0, 0, 0, 0, 0, 0xf };
	VkPipelineColorBlendStateCreateInfo cb = {
		VK_STRUCTURE_TYPE_PIPELINE_COLOR_BLEND_STATE_CREATE_INFO, NULL, 0, VK_FALSE,
		VK_LOGIC_OP_COPY, 1, &blend, { 0, 0, 0, 0 }
	};
	VkGraphicsPipelineCreateInfo gi = {
		VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO, NULL, 0, 2, stages, &input, &assembly,
		NULL, &vp, &raster, &ms, NULL, &cb, NULL, p->layout, p->pass, 0, VK_NULL_HANDLE, -1
	};
	TRY(vkCreateGraphicsPipelines(p->device, VK_NULL_HANDLE, 1, &gi, NULL, &p->pipeline));
	return 0;
}

/* Draws quads first to end of the pass into k's command buffer, which
 * begins the pass with its first. */
static void draw(struct program *p, int k, int first, int end)
{
	VkCommandBuffer cb = p->cbs[k];
	for (int i = first; i < end; i++) {
		if (!p->in_pass[k]) {
			VkClearValue clear = { .color = { { 0, 0, 0, 1 } } };
			VkRenderPassBeginInfo bi = { VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO, NULL,
						     p->pass, p->framebuffer,
						     { { 0, 0 }, { SIZE, SIZE } }, 1, &clear };
			vkCmdBeginRenderPass(cb, &bi, VK_SUBPASS_CONTENTS_INLINE);
			vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, p->pipeline);
			p->in_pass[k] = 1;
		}
		vkCmdDraw(cb, 4, 1, 0, (uint32_t)i);
	}
}

/* Begins k's command buffer for a later frame, once its last submission
 * is done, with the first `early` draws of that frame. */
static int begin_ahead(struct program *p, int k, int early)
{
	if (p->submitted[k]) {
		TRY(vkWaitForFences(p->device, 1, &p->fences[k], VK_TRUE, UINT64_MAX));
		TRY(vkResetFences(p->device, 1, &p->fences[k]));
		p->submitted[k] = 0;
	}
	VkCommandBufferBeginInfo bi = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, NULL,
					VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT, NULL };
	TRY(vkBeginCommandBuffer(p->cbs[k], &bi));
	p->in_pass[k] = 0;
	draw(p, k, 0, early);
	return 0;
}

static void destroy(struct program *p)
{
	if (p->device) {
		vkDeviceWaitIdle(p->device);
		vkDestroyPipeline(p->device, p->pipeline, NULL);
		vkDestroyPipelineLayout(p->device, p->layout, NULL);
		vkDestroyShaderModule(p->device, p->vert, NULL);
		vkDestroyShaderModule(p->device, p->frag, NULL);
		vkDestroyFramebuffer(p->device, p->framebuffer, NULL);
		vkDestroyRenderPass(p->device, p->pass, NULL);
		vkDestroyImageView(p->device, p->view, NULL);
		vkDestroyImage(p->device, p->image, NULL);
		vkFreeMemory(p->device, p->memory, NULL);
		for (int i = 0; i <= MAX_AHEAD; i++)
			vkDestroyFence(p->device, p->fences[i], NULL);
		vkDestroyCommandPool(p->device, p->pool, NULL);
		vkDestroyDevice(p->device, NULL);
	}
	if (p->messenger) {
		PFN_vkDestroyDebugUtilsMessengerEXT destroy_messenger =
			(PFN_vkDestroyDebugUtilsMessengerEXT)vkGetInstanceProcAddr(
				p->instance, "vkDestroyDebugUtilsMessengerEXT");
		if (destroy_messenger)
			destroy_messenger(p->instance, p->messenger, NULL);
	}
	if (p->instance)
		vkDestroyInstance(p->instance, NULL);
}

/* Begins, records and ends `hold` command buffers of one draw each. */
static int record_held(struct program *p, int hold)
{
	VkCommandBufferAllocateInfo ai = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, NULL,
					   p->pool, VK_COMMAND_BUFFER_LEVEL_PRIMARY, (uint32_t)hold };
	TRY(vkAllocateCommandBuffers(p->device, &ai, p->held));
	VkCommandBufferBeginInfo bi = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, NULL,
					VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT, NULL };
	VkClearValue clear = { .color = { { 0, 0, 0, 1 } } };
	VkRenderPassBeginInfo pi = { VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO, NULL, p->pass,
				     p->framebuffer, { { 0, 0 }, { SIZE, SIZE } }, 1, &clear };
	for (int i = 0; i < hold; i++) {
		TRY(vkBeginCommandBuffer(p->held[i], &bi));
		vkCmdBeginRenderPass(p->held[i], &pi, VK_SUBPASS_CONTENTS_INLINE);
		vkCmdBindPipeline(p->held[i], VK_PIPELINE_BIND_POINT_GRAPHICS, p->pipeline);
		vkCmdDraw(p->held[i], 4, 1, 0, 0);
		vkCmdEndRenderPass(p->held[i]);
		TRY(vkEndCommandBuffer(p->held[i]));
	}
	return 0;
}

static int run(struct program *p, int frames, int draws, int ahead, int early, int hold)
{
	const int n = ahead + 1;
	/* The command buffers of the first frames, begun before any. */
	for (int f = 0; f < ahead && f < frames; f++)
		if (begin_ahead(p, f % n, early) != 0)
			return 1;
	for (int f = 0; f < frames; f++) {
		int k = f % n;
		draw(p, k, early, draws);
		if (p->in_pass[k])
			vkCmdEndRenderPass(p->cbs[k]);
		TRY(vkEndCommandBuffer(p->cbs[k]));
		/* Frame F + ahead's, begun in frame F: the frame ends at
		 * the fenced submission below. */
		if (f + ahead < frames && begin_ahead(p, (f + ahead) % n, early) != 0)
			return 1;
		if (hold && f == HOLD_FRAME && record_held(p, hold) != 0)
			return 1;
		/* The held ones go first, in submissions of HOLD_BATCH
		 * without a fence, which end no frame. */
		for (int i = 0; hold && f == frames - 1 && f > HOLD_FRAME && i < hold; i += HOLD_BATCH) {
			uint32_t count = (uint32_t)(hold - i < HOLD_BATCH ? hold - i : HOLD_BATCH);
			VkSubmitInfo hi = { VK_STRUCTURE_TYPE_SUBMIT_INFO, NULL, 0, NULL, NULL, count,
					    p->held + i, 0, NULL };
			TRY(vkQueueSubmit(p->queue, 1, &hi, VK_NULL_HANDLE));
		}
		VkSubmitInfo si = { VK_STRUCTURE_TYPE_SUBMIT_INFO, NULL, 0, NULL, NULL, 1, &p->cbs[k],
				    0, NULL };
		TRY(vkQueueSubmit(p->queue, 1, &si, p->fences[k]));
		p->submitted[k] = 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int frames = 20, draws = 300, ahead = 1, early = 0, hold = 0, validate = 0, statistics = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--frames") == 0 && i + 1 < argc) {
			frames = atoi(argv[++i]);
		} else if (strcmp(argv[i], "--draws") == 0 && i + 1 < argc) {
			draws = atoi(argv[++i]);
		} else if (strcmp(argv[i], "--ahead") == 0 && i + 1 < argc) {
			ahead = atoi(argv[++i]);
		} else if (strcmp(argv[i], "--early") == 0 && i + 1 < argc) {
			early = atoi(argv[++i]);
		} else if (strcmp(argv[i], "--hold") == 0 && i + 1 < argc) {
			hold = atoi(argv[++i]);
		} else if (strcmp(argv[i], "--validate") == 0) {
			validate = 1;
		} else if (strcmp(argv[i], "--statistics") == 0) {
			statistics = 1;
		} else {
			fprintf(stderr, "usage: ahead [--frames N] [--draws N] [--ahead 1-%d] "
				"[--early E] [--hold 0-%d] [--statistics] [--validate]\n", MAX_AHEAD,
				MAX_HOLD);
			return 2;
		}
	}
	if (frames < 1 || draws < 0 || ahead < 1 || ahead > MAX_AHEAD || early < 0 ||
	    early > draws || hold < 0 || hold > MAX_HOLD) {
		fprintf(stderr, "ahead: --frames from 1, --ahead from 1 to %d, --early at most "
			"--draws, --hold at most %d\n", MAX_AHEAD, MAX_HOLD);
		return 2;
	}
	struct program p;
	memset(&p, 0, sizeof(p));
	int status = make_device(&p, validate, statistics);
	if (status == 0)
		status = make_target(&p);
	if (status == 0)
		status = make_pipeline(&p);
	if (status == 0)
		status = run(&p, frames, draws, ahead, early, hold);
	destroy(&p);
	if (status == 0)
		printf("ahead: %d frames of %d draws, each begun %d frame%s ahead\n", frames, draws,
		       ahead, ahead == 1 ? "" : "s");
	if (messages) {
		fprintf(stderr, "ahead: %u validation messages\n", messages);
		return 1;
	}
	return status;
}
