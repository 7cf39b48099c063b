/* SPDX-License-Identifier: MIT */
/*
 * careless.c: a Vulkan program that knows nothing of crumbs and uses debug
 * labels, markers and object names the way careless programs do: it never
 * enables VK_EXT_debug_utils or VK_EXT_debug_marker, yet asks for their
 * functions and calls those it is given, with NULL and empty names, ends
 * without begins, begins never ended, a label that ends in a later command
 * buffer, names of every length up to MAX_NAME bytes, and names given again
 * to handles that were destroyed and came back. Between the labels it does
 * real GPU work (fills, a copy, a clear, a compute dispatch). Each frame
 * ends with a fenced submission and a wait, so the crumbs layer sees one
 * frame per frame (layer/LAYER.md). It is invalid on purpose: never run
 * it under the validation layer.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vulkan/vulkan.h>

#include "careless.comp.h"

#define BUFFER_BYTES (4u << 20)
#define IMAGE_SIZE 256
#define GROUP_SIZE 64 /* careless.comp's local_size_x */
#define GROUPS 256
#define ROUNDS 256
#define MAX_NAME 4096
#define MAX_FRAMES 100000

_Static_assert(GROUPS * GROUP_SIZE * 4 <= BUFFER_BYTES, "the dispatch stays in its buffer");

#define ARRAY_COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* The functions of both extensions, as the program asks for them: the
 * command's name without "vk", and the field that holds it. */
#define DEBUG_FUNCTIONS(X)                                   \
	X(CmdBeginDebugUtilsLabelEXT, begin_label)           \
	X(CmdEndDebugUtilsLabelEXT, end_label)               \
	X(CmdInsertDebugUtilsLabelEXT, insert_label)         \
	X(QueueBeginDebugUtilsLabelEXT, queue_begin_label)   \
	X(QueueEndDebugUtilsLabelEXT, queue_end_label)       \
	X(QueueInsertDebugUtilsLabelEXT, queue_insert_label) \
	X(SetDebugUtilsObjectNameEXT, set_name)              \
	X(CmdDebugMarkerBeginEXT, marker_begin)              \
	X(CmdDebugMarkerEndEXT, marker_end)                  \
	X(CmdDebugMarkerInsertEXT, marker_insert)            \
	X(DebugMarkerSetObjectNameEXT, set_marker_name)

struct debug_fns {
#define FIELD_(command, field) PFN_vk##command field;
	DEBUG_FUNCTIONS(FIELD_)
#undef FIELD_
};

struct frame_objects {
	VkBuffer a, b;
	VkDeviceMemory a_memory, b_memory;
	VkImage image;
	VkDeviceMemory image_memory;
	VkPipeline pipeline;
	VkDescriptorSet set;
};

struct program {
	VkInstance instance;
	VkPhysicalDevice physical;
	VkDevice device;
	uint32_t family;
	VkQueue queue;
	VkCommandPool pool;
	VkCommandBuffer first, second; /* the label of one ends in the other */
	VkFence fence;
	VkShaderModule shader;
	VkDescriptorSetLayout set_layout;
	VkPipelineLayout pipeline_layout;
	VkDescriptorPool descriptor_pool;
	struct debug_fns from_instance, from_device;
	char name[MAX_NAME + 1];
};

static int fail(const char *what, VkResult r)
{
	fprintf(stderr, "careless: %s failed (VkResult %d)\n", what, (int)r);
	return 1;
}

#define TRY(call)                               \
	do {                                    \
		VkResult r_ = (call);           \
		if (r_ != VK_SUCCESS)           \
			return fail(#call, r_); \
	} while (0)

static void load_functions(struct program *p)
{
#define LOAD_(command, field)                                                       \
	p->from_instance.field =                                                    \
		(PFN_vk##command)vkGetInstanceProcAddr(p->instance, "vk" #command); \
	p->from_device.field = (PFN_vk##command)vkGetDeviceProcAddr(p->device, "vk" #command);
	DEBUG_FUNCTIONS(LOAD_)
#undef LOAD_
}

#define ONE_(command, field) +1
#define DEBUG_FUNCTION_COUNT (0 DEBUG_FUNCTIONS(ONE_))

static unsigned count_functions(const struct debug_fns *f)
{
	unsigned n = 0;
#define COUNT_(command, field) n += f->field != NULL;
	DEBUG_FUNCTIONS(COUNT_)
#undef COUNT_
	return n;
}

/*
 * What a frame calls: what the device gave, through the instance's pointer
 * on odd frames where it has one too. A function the device did not give
 * is never called: the loader hands out its trampolines for device
 * extension commands through vkGetInstanceProcAddr whether or not anything
 * below implements them (vkCmdDebugMarkerBeginEXT on lavapipe), and those
 * jump to NULL.
 */
static void pick_functions(const struct program *p, int frame, struct debug_fns *out)
{
#define PICK_(command, field)                                                      \
	out->field = p->from_device.field && (frame & 1) && p->from_instance.field \
			     ? p->from_instance.field                              \
			     : p->from_device.field;
	DEBUG_FUNCTIONS(PICK_)
#undef PICK_
}

/* Labels and markers, called only where the function was given. */

static void begin_label(const struct debug_fns *f, VkCommandBuffer cb, const char *name)
{
	VkDebugUtilsLabelEXT l = { VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT, NULL, name,
				   { 1.0f, 0.5f, 0.0f, 1.0f } };
	if (f->begin_label)
		f->begin_label(cb, &l);
}

static void end_label(const struct debug_fns *f, VkCommandBuffer cb)
{
	if (f->end_label)
		f->end_label(cb);
}

static void insert_label(const struct debug_fns *f, VkCommandBuffer cb, const char *name)
{
	VkDebugUtilsLabelEXT l = { VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT, NULL, name,
				   { 0.0f, 0.0f, 0.0f, 0.0f } };
	if (f->insert_label)
		f->insert_label(cb, &l);
}

static void marker_begin(const struct debug_fns *f, VkCommandBuffer cb, const char *name)
{
	VkDebugMarkerMarkerInfoEXT m = { VK_STRUCTURE_TYPE_DEBUG_MARKER_MARKER_INFO_EXT, NULL,
					 name, { 0.0f, 1.0f, 0.0f, 1.0f } };
	if (f->marker_begin)
		f->marker_begin(cb, &m);
}

static void marker_end(const struct debug_fns *f, VkCommandBuffer cb)
{
	if (f->marker_end)
		f->marker_end(cb);
}

static void marker_insert(const struct debug_fns *f, VkCommandBuffer cb, const char *name)
{
	VkDebugMarkerMarkerInfoEXT m = { VK_STRUCTURE_TYPE_DEBUG_MARKER_MARKER_INFO_EXT, NULL,
					 name, { 0.0f, 0.0f, 0.0f, 0.0f } };
	if (f->marker_insert)
		f->marker_insert(cb, &m);
}

static void queue_begin_label(const struct debug_fns *f, VkQueue queue, const char *name)
{
	VkDebugUtilsLabelEXT l = { VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT, NULL, name,
				   { 0.0f, 0.0f, 1.0f, 1.0f } };
	if (f->queue_begin_label)
		f->queue_begin_label(queue, &l);
}

static void queue_end_label(const struct debug_fns *f, VkQueue queue)
{
	if (f->queue_end_label)
		f->queue_end_label(queue);
}

static void queue_insert_label(const struct debug_fns *f, VkQueue queue, const char *name)
{
	VkDebugUtilsLabelEXT l = { VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT, NULL, name,
				   { 0.0f, 0.0f, 0.0f, 0.0f } };
	if (f->queue_insert_label)
		f->queue_insert_label(queue, &l);
}

/* Names one object through both extensions, the marker's last: the name
 * it ends with is the same whichever the layer keeps. A NULL name is valid
 * for VK_EXT_debug_utils (it removes the name), not for VK_EXT_debug_marker;
 * careless programs pass it to both. The results are ignored, as careless
 * programs do. */
static void set_name(const struct program *p, const struct debug_fns *f, VkObjectType type,
		     VkDebugReportObjectTypeEXT marker_type, uint64_t handle, const char *name)
{
	if (f->set_name) {
		VkDebugUtilsObjectNameInfoEXT info = {
			VK_STRUCTURE_TYPE_DEBUG_UTILS_OBJECT_NAME_INFO_EXT, NULL, type, handle, name
		};
		(void)f->set_name(p->device, &info);
	}
	if (f->set_marker_name) {
		VkDebugMarkerObjectNameInfoEXT info = {
			VK_STRUCTURE_TYPE_DEBUG_MARKER_OBJECT_NAME_INFO_EXT, NULL, marker_type,
			handle, name
		};
		(void)f->set_marker_name(p->device, &info);
	}
}

/* Non-dispatchable handles are pointers or 64-bit integers, depending on
 * the platform; dispatchable ones are pointers. */
#define HANDLE(h) ((uint64_t)(h))
#define DISPATCHABLE(h) ((uint64_t)(uintptr_t)(h))

/* p->name holds `prefix` followed by a repeating pattern, `length` bytes in
 * all (a prefix longer than that is cut). */
static const char *long_name(struct program *p, const char *prefix, size_t length)
{
	static const char pattern[] = "0123456789abcdefghijklmnopqrstuvwxyz";
	size_t n = strlen(prefix);
	if (length > MAX_NAME)
		length = MAX_NAME;
	for (size_t i = 0; i < length; i++)
		p->name[i] = i < n ? prefix[i] : pattern[(i - n) % (sizeof(pattern) - 1)];
	p->name[length] = '\0';
	return p->name;
}

static int memory_type(const struct program *p, uint32_t bits, uint32_t *out)
{
	VkPhysicalDeviceMemoryProperties props;
	vkGetPhysicalDeviceMemoryProperties(p->physical, &props);
	for (uint32_t i = 0; i < props.memoryTypeCount; i++)
		if (bits & (1u << i)) {
			*out = i;
			return 0;
		}
	return fail("finding a memory type", VK_ERROR_OUT_OF_DEVICE_MEMORY);
}

static int make_buffer(const struct program *p, VkBuffer *buffer, VkDeviceMemory *memory)
{
	VkBufferCreateInfo bi = {
		.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
		.size = BUFFER_BYTES,
		.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT |
			 VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
		.sharingMode = VK_SHARING_MODE_EXCLUSIVE,
	};
	TRY(vkCreateBuffer(p->device, &bi, NULL, buffer));
	VkMemoryRequirements req;
	vkGetBufferMemoryRequirements(p->device, *buffer, &req);
	VkMemoryAllocateInfo mi = { VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, NULL, req.size, 0 };
	if (memory_type(p, req.memoryTypeBits, &mi.memoryTypeIndex) != 0)
		return 1;
	TRY(vkAllocateMemory(p->device, &mi, NULL, memory));
	TRY(vkBindBufferMemory(p->device, *buffer, *memory, 0));
	return 0;
}

static int make_image(const struct program *p, VkImage *image, VkDeviceMemory *memory)
{
	VkImageCreateInfo ii = {
		.sType = VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO,
		.imageType = VK_IMAGE_TYPE_2D,
		.format = VK_FORMAT_R8G8B8A8_UNORM,
		.extent = { IMAGE_SIZE, IMAGE_SIZE, 1 },
		.mipLevels = 1,
		.arrayLayers = 1,
		.samples = VK_SAMPLE_COUNT_1_BIT,
		.tiling = VK_IMAGE_TILING_OPTIMAL,
		.usage = VK_IMAGE_USAGE_TRANSFER_DST_BIT,
		.sharingMode = VK_SHARING_MODE_EXCLUSIVE,
		.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED,
	};
	TRY(vkCreateImage(p->device, &ii, NULL, image));
	VkMemoryRequirements req;
	vkGetImageMemoryRequirements(p->device, *image, &req);
	VkMemoryAllocateInfo mi = { VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, NULL, req.size, 0 };
	if (memory_type(p, req.memoryTypeBits, &mi.memoryTypeIndex) != 0)
		return 1;
	TRY(vkAllocateMemory(p->device, &mi, NULL, memory));
	TRY(vkBindImageMemory(p->device, *image, *memory, 0));
	return 0;
}

static int make_pipeline(const struct program *p, VkPipeline *out)
{
	VkComputePipelineCreateInfo ci = {
		.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
		.stage = { .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
			   .stage = VK_SHADER_STAGE_COMPUTE_BIT,
			   .module = p->shader,
			   .pName = "main" },
		.layout = p->pipeline_layout,
	};
	TRY(vkCreateComputePipelines(p->device, VK_NULL_HANDLE, 1, &ci, NULL, out));
	return 0;
}

/* What lives for the whole run. */
static int setup(struct program *p)
{
	VkApplicationInfo app = { VK_STRUCTURE_TYPE_APPLICATION_INFO, NULL, "careless", 1, NULL, 0,
				  VK_API_VERSION_1_1 };
	/* No layers, no extensions: that is the point. */
	VkInstanceCreateInfo ii = { VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, NULL, 0, &app, 0, NULL,
				    0, NULL };
	TRY(vkCreateInstance(&ii, NULL, &p->instance));
	uint32_t count = 1;
	VkResult er = vkEnumeratePhysicalDevices(p->instance, &count, &p->physical);
	if ((er != VK_SUCCESS && er != VK_INCOMPLETE) || count == 0)
		return fail("vkEnumeratePhysicalDevices", er);
	VkQueueFamilyProperties families[16];
	uint32_t nf = ARRAY_COUNT(families);
	vkGetPhysicalDeviceQueueFamilyProperties(p->physical, &nf, families);
	p->family = 0;
	while (p->family < nf && !(families[p->family].queueFlags & VK_QUEUE_COMPUTE_BIT))
		p->family++;
	if (p->family == nf)
		return fail("finding a compute queue family", VK_ERROR_FEATURE_NOT_PRESENT);

	const float priority = 1.0f;
	VkDeviceQueueCreateInfo qi = { VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, NULL, 0,
				       p->family, 1, &priority };
	VkDeviceCreateInfo di = { VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, NULL, 0, 1, &qi, 0, NULL, 0,
				  NULL, NULL };
	TRY(vkCreateDevice(p->physical, &di, NULL, &p->device));
	vkGetDeviceQueue(p->device, p->family, 0, &p->queue);
	load_functions(p);

	VkCommandPoolCreateInfo pi = { VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, NULL,
				       VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT, p->family };
	TRY(vkCreateCommandPool(p->device, &pi, NULL, &p->pool));
	VkCommandBuffer cbs[2];
	VkCommandBufferAllocateInfo ai = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, NULL,
					   p->pool, VK_COMMAND_BUFFER_LEVEL_PRIMARY, 2 };
	TRY(vkAllocateCommandBuffers(p->device, &ai, cbs));
	p->first = cbs[0];
	p->second = cbs[1];
	VkFenceCreateInfo fi = { VK_STRUCTURE_TYPE_FENCE_CREATE_INFO, NULL, 0 };
	TRY(vkCreateFence(p->device, &fi, NULL, &p->fence));

	VkShaderModuleCreateInfo si = { VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, NULL, 0,
					sizeof(shader_careless_comp), shader_careless_comp };
	TRY(vkCreateShaderModule(p->device, &si, NULL, &p->shader));
	VkDescriptorSetLayoutBinding binding = { 0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1,
						 VK_SHADER_STAGE_COMPUTE_BIT, NULL };
	VkDescriptorSetLayoutCreateInfo li = { VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
					       NULL, 0, 1, &binding };
	TRY(vkCreateDescriptorSetLayout(p->device, &li, NULL, &p->set_layout));
	VkPushConstantRange push = { VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(uint32_t) };
	VkPipelineLayoutCreateInfo pli = { VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, NULL, 0,
					   1, &p->set_layout, 1, &push };
	TRY(vkCreatePipelineLayout(p->device, &pli, NULL, &p->pipeline_layout));
	VkDescriptorPoolSize size = { VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1 };
	VkDescriptorPoolCreateInfo dpi = { VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO, NULL, 0,
					   1, 1, &size };
	TRY(vkCreateDescriptorPool(p->device, &dpi, NULL, &p->descriptor_pool));
	return 0;
}

/* A frame's buffers, image, pipeline and descriptor set, each named: the
 * handles of the last frame's, destroyed by now, usually come back. */
static int make_frame_objects(struct program *p, const struct debug_fns *f, int frame,
			      struct frame_objects *o)
{
	char text[64];
	if (make_buffer(p, &o->a, &o->a_memory) != 0 || make_buffer(p, &o->b, &o->b_memory) != 0 ||
	    make_image(p, &o->image, &o->image_memory) != 0 || make_pipeline(p, &o->pipeline) != 0)
		return 1;
	VkDescriptorSetAllocateInfo ai = { VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO, NULL,
					   p->descriptor_pool, 1, &p->set_layout };
	TRY(vkAllocateDescriptorSets(p->device, &ai, &o->set));
	VkDescriptorBufferInfo info = { o->b, 0, VK_WHOLE_SIZE };
	VkWriteDescriptorSet write = {
		.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
		.dstSet = o->set,
		.descriptorCount = 1,
		.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
		.pBufferInfo = &info,
	};
	vkUpdateDescriptorSets(p->device, 1, &write, 0, NULL);

	/* Every length from 0 to MAX_NAME, on one buffer, then its name. */
	for (size_t len = 0; len <= MAX_NAME; len++)
		set_name(p, f, VK_OBJECT_TYPE_BUFFER, VK_DEBUG_REPORT_OBJECT_TYPE_BUFFER_EXT,
			 HANDLE(o->a), long_name(p, "Scratch A ", len));
	snprintf(text, sizeof(text), "Scratch A %d", frame);
	set_name(p, f, VK_OBJECT_TYPE_BUFFER, VK_DEBUG_REPORT_OBJECT_TYPE_BUFFER_EXT, HANDLE(o->a),
		 text);
	snprintf(text, sizeof(text), "Scratch B %d", frame);
	set_name(p, f, VK_OBJECT_TYPE_BUFFER, VK_DEBUG_REPORT_OBJECT_TYPE_BUFFER_EXT, HANDLE(o->b),
		 text);
	/* A long name that stays. */
	set_name(p, f, VK_OBJECT_TYPE_IMAGE, VK_DEBUG_REPORT_OBJECT_TYPE_IMAGE_EXT,
		 HANDLE(o->image), long_name(p, "Target ", (size_t)(1000 + 400 * frame)));
	/* Named, unnamed, named again. */
	set_name(p, f, VK_OBJECT_TYPE_PIPELINE, VK_DEBUG_REPORT_OBJECT_TYPE_PIPELINE_EXT,
		 HANDLE(o->pipeline), "Stale Name");
	set_name(p, f, VK_OBJECT_TYPE_PIPELINE, VK_DEBUG_REPORT_OBJECT_TYPE_PIPELINE_EXT,
		 HANDLE(o->pipeline), NULL);
	set_name(p, f, VK_OBJECT_TYPE_PIPELINE, VK_DEBUG_REPORT_OBJECT_TYPE_PIPELINE_EXT,
		 HANDLE(o->pipeline), "");
	snprintf(text, sizeof(text), "Scramble %d", frame);
	set_name(p, f, VK_OBJECT_TYPE_PIPELINE, VK_DEBUG_REPORT_OBJECT_TYPE_PIPELINE_EXT,
		 HANDLE(o->pipeline), text);
	set_name(p, f, VK_OBJECT_TYPE_COMMAND_BUFFER,
		 VK_DEBUG_REPORT_OBJECT_TYPE_COMMAND_BUFFER_EXT, DISPATCHABLE(p->first),
		 "First Commands");
	set_name(p, f, VK_OBJECT_TYPE_COMMAND_BUFFER,
		 VK_DEBUG_REPORT_OBJECT_TYPE_COMMAND_BUFFER_EXT, DISPATCHABLE(p->second),
		 "Second Commands");
	return 0;
}

static void free_frame_objects(struct program *p, struct frame_objects *o)
{
	vkDestroyPipeline(p->device, o->pipeline, NULL);
	vkDestroyImage(p->device, o->image, NULL);
	vkFreeMemory(p->device, o->image_memory, NULL);
	vkDestroyBuffer(p->device, o->a, NULL);
	vkFreeMemory(p->device, o->a_memory, NULL);
	vkDestroyBuffer(p->device, o->b, NULL);
	vkFreeMemory(p->device, o->b_memory, NULL);
	(void)vkResetDescriptorPool(p->device, p->descriptor_pool, 0);
	memset(o, 0, sizeof(*o));
}

/* What one transfer or dispatch wrote, the next one reads or writes. */
static void barrier(VkCommandBuffer cb)
{
	VkMemoryBarrier b = { VK_STRUCTURE_TYPE_MEMORY_BARRIER, NULL,
			      VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_WRITE_BIT,
			      VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT |
				      VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT };
	const VkPipelineStageFlags stages =
		VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
	vkCmdPipelineBarrier(cb, stages, stages, 0, 1, &b, 0, NULL, 0, NULL);
}

/*
 * The first command buffer: ends without begins (on frame 0 nothing is
 * open; later they meet the begins the last frame never ended), labels
 * named NULL and "", inserted labels, markers, a long label, and "Cross
 * Buffer", which the second command buffer ends.
 */
static int record_first(struct program *p, const struct debug_fns *f, int frame,
			const struct frame_objects *o)
{
	VkCommandBuffer cb = p->first;
	VkCommandBufferBeginInfo bi = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, NULL,
					VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT, NULL };
	TRY(vkBeginCommandBuffer(cb, &bi));
	end_label(f, cb);
	end_label(f, cb);
	marker_end(f, cb);

	begin_label(f, cb, "Upload");
	vkCmdFillBuffer(cb, o->a, 0, VK_WHOLE_SIZE, (uint32_t)frame);
	end_label(f, cb);
	barrier(cb);
	begin_label(f, cb, NULL);
	vkCmdFillBuffer(cb, o->a, 0, BUFFER_BYTES / 4, 1u);
	end_label(f, cb);
	barrier(cb);
	begin_label(f, cb, "");
	vkCmdFillBuffer(cb, o->a, BUFFER_BYTES / 4, BUFFER_BYTES / 4, 2u);
	end_label(f, cb);
	barrier(cb);
	insert_label(f, cb, "Inserted Label");
	insert_label(f, cb, NULL);
	insert_label(f, cb, "");

	marker_begin(f, cb, "Marker Copy");
	VkBufferCopy copy = { 0, 0, BUFFER_BYTES };
	vkCmdCopyBuffer(cb, o->a, o->b, 1, &copy);
	marker_end(f, cb);
	barrier(cb);

	marker_begin(f, cb, NULL);
	VkImageMemoryBarrier to_general = {
		.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER,
		.dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
		.oldLayout = VK_IMAGE_LAYOUT_UNDEFINED,
		.newLayout = VK_IMAGE_LAYOUT_GENERAL,
		.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
		.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
		.image = o->image,
		.subresourceRange = { VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1 },
	};
	vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
			     0, 0, NULL, 0, NULL, 1, &to_general);
	begin_label(f, cb, "Bild löschen");
	VkClearColorValue colour = { { 0.25f, 0.5f, 0.75f, 1.0f } };
	VkImageSubresourceRange range = { VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1 };
	vkCmdClearColorImage(cb, o->image, VK_IMAGE_LAYOUT_GENERAL, &colour, 1, &range);
	end_label(f, cb);
	marker_end(f, cb);
	marker_insert(f, cb, NULL);
	marker_insert(f, cb, "Marker Point");

	/* 512 bytes more each frame, from 64 to 3648 and again. */
	begin_label(f, cb, long_name(p, "Long Label ", (size_t)(64 + 512 * (frame % 8))));
	vkCmdFillBuffer(cb, o->b, BUFFER_BYTES / 2, BUFFER_BYTES / 2, 3u);
	end_label(f, cb);
	barrier(cb);

	begin_label(f, cb, "Cross Buffer");
	vkCmdFillBuffer(cb, o->b, BUFFER_BYTES / 2, BUFFER_BYTES / 2, 4u);
	barrier(cb);
	TRY(vkEndCommandBuffer(cb));
	return 0;
}

/*
 * The second command buffer, recorded again every frame without
 * ONE_TIME_SUBMIT, as careless programs do: "Second Half" inside "Cross
 * Buffer", which it ends, a compute dispatch, and a label and a marker it
 * never ends.
 */
static int record_second(struct program *p, const struct debug_fns *f,
			 const struct frame_objects *o)
{
	VkCommandBuffer cb = p->second;
	VkCommandBufferBeginInfo bi = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, NULL, 0,
					NULL };
	TRY(vkBeginCommandBuffer(cb, &bi));
	begin_label(f, cb, "Second Half");
	vkCmdFillBuffer(cb, o->b, 0, BUFFER_BYTES / 2, 5u);
	end_label(f, cb);
	barrier(cb);
	end_label(f, cb); /* "Cross Buffer" */

	begin_label(f, cb, "Compute Scramble");
	const uint32_t rounds = ROUNDS;
	vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, o->pipeline);
	vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p->pipeline_layout, 0, 1,
				&o->set, 0, NULL);
	vkCmdPushConstants(cb, p->pipeline_layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(rounds),
			   &rounds);
	vkCmdDispatch(cb, GROUPS, 1, 1);
	end_label(f, cb);
	barrier(cb);

	begin_label(f, cb, "Never Ended");
	vkCmdFillBuffer(cb, o->a, 0, VK_WHOLE_SIZE, 6u);
	marker_begin(f, cb, "Marker Never Ended");
	vkCmdFillBuffer(cb, o->a, 0, BUFFER_BYTES / 2, 7u);
	TRY(vkEndCommandBuffer(cb));
	return 0;
}

/* Two submissions in a queue label, the second with the fence that ends
 * the frame, and before them an end of a queue label never begun. */
static int submit_frame(struct program *p, const struct debug_fns *f)
{
	queue_end_label(f, p->queue);
	queue_begin_label(f, p->queue, "Queue Frame");
	VkSubmitInfo si = { VK_STRUCTURE_TYPE_SUBMIT_INFO, NULL, 0, NULL, NULL, 1, &p->first, 0,
			    NULL };
	TRY(vkQueueSubmit(p->queue, 1, &si, VK_NULL_HANDLE));
	queue_insert_label(f, p->queue, NULL);
	si.pCommandBuffers = &p->second;
	TRY(vkQueueSubmit(p->queue, 1, &si, p->fence));
	queue_end_label(f, p->queue);
	TRY(vkWaitForFences(p->device, 1, &p->fence, VK_TRUE, UINT64_MAX));
	TRY(vkResetFences(p->device, 1, &p->fence));
	return 0;
}

/* The handles of the last frames, to tell how many came back. */
struct handles {
	uint64_t recent[16];
	unsigned count, reused;
};

static void handles_see(struct handles *h, uint64_t handle)
{
	for (unsigned i = 0; i < h->count && i < ARRAY_COUNT(h->recent); i++)
		if (h->recent[i] == handle) {
			h->reused++;
			return;
		}
	h->recent[h->count++ % ARRAY_COUNT(h->recent)] = handle;
}

static void teardown(struct program *p)
{
	if (p->device) {
		(void)vkDeviceWaitIdle(p->device);
		vkDestroyDescriptorPool(p->device, p->descriptor_pool, NULL);
		vkDestroyPipelineLayout(p->device, p->pipeline_layout, NULL);
		vkDestroyDescriptorSetLayout(p->device, p->set_layout, NULL);
		vkDestroyShaderModule(p->device, p->shader, NULL);
		vkDestroyFence(p->device, p->fence, NULL);
		vkDestroyCommandPool(p->device, p->pool, NULL);
		vkDestroyDevice(p->device, NULL);
	}
	if (p->instance)
		vkDestroyInstance(p->instance, NULL);
}

int main(int argc, char **argv)
{
	int frames = 8;
	for (int i = 1; i < argc; i++) {
		char *end = NULL;
		if (strcmp(argv[i], "--frames") == 0 && i + 1 < argc) {
			long n = strtol(argv[++i], &end, 10);
			if (*end != '\0' || n < 1 || n > MAX_FRAMES)
				end = NULL;
			frames = (int)n;
		}
		if (!end) {
			fprintf(stderr, "usage: careless [--frames N]\n");
			return 2;
		}
	}

	static struct program p;
	if (setup(&p) != 0)
		return 1;
	printf("careless: %u of %d debug functions through vkGetDeviceProcAddr, "
	       "%u through vkGetInstanceProcAddr\n",
	       count_functions(&p.from_device), DEBUG_FUNCTION_COUNT,
	       count_functions(&p.from_instance));

	struct handles buffers = { 0 }, images = { 0 }, pipelines = { 0 };
	for (int frame = 0; frame < frames; frame++) {
		struct debug_fns f;
		struct frame_objects o = { 0 };
		pick_functions(&p, frame, &f);
		if (make_frame_objects(&p, &f, frame, &o) != 0 ||
		    record_first(&p, &f, frame, &o) != 0 || record_second(&p, &f, &o) != 0 ||
		    submit_frame(&p, &f) != 0)
			return 1;
		handles_see(&buffers, HANDLE(o.a));
		handles_see(&buffers, HANDLE(o.b));
		handles_see(&images, HANDLE(o.image));
		handles_see(&pipelines, HANDLE(o.pipeline));
		free_frame_objects(&p, &o);
	}
	teardown(&p);
	printf("careless: %d frames; handles named again after they came back: %u buffers, "
	       "%u images, %u pipelines\n",
	       frames, buffers.reused, images.reused, pipelines.reused);
	return 0;
}
