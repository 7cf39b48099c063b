/* SPDX-License-Identifier: MIT */
/*
 * test_pipeline_id.c: the identity the layer gives a pipeline: the same
 * for the same shaders whatever the handles, the order of the stages or
 * the way the pipeline was put together (whole, or linked from
 * libraries), different when the code, an entry point, a specialization
 * constant, the topology or the targets differ; unknown when a shader's
 * code is; and the names made of it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../../layer/layer_internal.h"

#include <stdio.h>
#include <string.h>

/* Shader modules by handle: 1 to 4 hold these words. */
static const uint32_t code_a[] = { 0x07230203, 0x00010000, 1, 2, 3, 4, 5 };
static const uint32_t code_b[] = { 0x07230203, 0x00010000, 1, 2, 3, 4, 6 };

static uint64_t fake_module(void *user, VkShaderModule m)
{
	(void)user;
	switch ((uint64_t)m) {
	case 1: case 3: return shader_code_hash(code_a, sizeof(code_a));
	case 2: case 4: return shader_code_hash(code_b, sizeof(code_b));
	default: return 0;
	}
}

/* Libraries by handle: 100 + k is libs[k]. */
static struct pipeline_info libs[4];

static const struct pipeline_info *fake_library(void *user, VkPipeline p)
{
	(void)user;
	uint64_t h = (uint64_t)p;
	return h >= 100 && h < 104 ? &libs[h - 100] : NULL;
}

/* Render passes 7 and 8 draw to different targets. */
static uint64_t fake_pass(void *user, VkRenderPass p)
{
	(void)user;
	return (uint64_t)p == 7 ? 0x1234 : (uint64_t)p == 8 ? 0x5678 : 0;
}

static const struct pipeline_lookup lookup = { fake_module, fake_library, fake_pass, NULL };

static VkPipelineShaderStageCreateInfo stage(VkShaderStageFlagBits bit, uint64_t module,
					     const char *entry)
{
	return (VkPipelineShaderStageCreateInfo){ VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
						  NULL, 0, bit, (VkShaderModule)module, entry, NULL };
}

static uint64_t compute_id(uint64_t module, const char *entry, const VkSpecializationInfo *spec,
			   struct pipeline_info *out)
{
	VkComputePipelineCreateInfo ci = { .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO };
	ci.stage = stage(VK_SHADER_STAGE_COMPUTE_BIT, module, entry);
	ci.stage.pSpecializationInfo = spec;
	struct pipeline_info info;
	pipeline_info_compute(&ci, &lookup, out ? out : &info);
	return (out ? out : &info)->id;
}

static void hash_is_stable(void **state)
{
	(void)state;
	/* The same bytes hash alike in every process: a change of these
	 * values changes every pipeline's name in every capture. */
	assert_int_equal(pipeline_hash(0, "", 0), pipeline_hash(0, "", 0));
	assert_true(pipeline_hash(0, "ab", 2) != pipeline_hash(0, "ba", 2));
	assert_true(pipeline_hash(pipeline_hash(0, "ab", 2), "c", 1) !=
		    pipeline_hash(pipeline_hash(0, "a", 1), "bc", 2));
	char text[64];
	snprintf(text, sizeof(text), "%016llx",
		 (unsigned long long)shader_code_hash(code_a, sizeof(code_a)));
	assert_string_equal(text, "070b510b231b6b01");
	assert_int_equal(shader_code_hash(NULL, 0), 0);
	assert_true(shader_code_hash("", 0) != 0);
	struct pipeline_info info;
	compute_id(1, "gblur", NULL, &info);
	pipeline_label(&info, text, sizeof(text));
	assert_string_equal(text, "gblur bb40");
}

static void compute_identity(void **state)
{
	(void)state;
	/* Handles say nothing: modules 1 and 3 hold the same code. */
	assert_int_equal(compute_id(1, "main", NULL, NULL), compute_id(3, "main", NULL, NULL));
	assert_true(compute_id(1, "main", NULL, NULL) != 0);
	/* The code, the entry point and the constants do. */
	assert_true(compute_id(1, "main", NULL, NULL) != compute_id(2, "main", NULL, NULL));
	assert_true(compute_id(1, "main", NULL, NULL) != compute_id(1, "gblur", NULL, NULL));
	uint32_t one = 1, two = 2;
	VkSpecializationMapEntry e = { 0, 0, 4 };
	VkSpecializationInfo s1 = { 1, &e, 4, &one }, s2 = { 1, &e, 4, &two }, s1b = { 1, &e, 4, &one };
	assert_int_equal(compute_id(1, "main", &s1, NULL), compute_id(1, "main", &s1b, NULL));
	assert_true(compute_id(1, "main", &s1, NULL) != compute_id(1, "main", &s2, NULL));
	assert_true(compute_id(1, "main", &s1, NULL) != compute_id(1, "main", NULL, NULL));
	VkSpecializationMapEntry other = { 1, 0, 4 };
	VkSpecializationInfo s3 = { 1, &other, 4, &one };
	assert_true(compute_id(1, "main", &s1, NULL) != compute_id(1, "main", &s3, NULL));
	/* A constant outside its data is not read. */
	VkSpecializationMapEntry past = { 0, 2, 4 };
	VkSpecializationInfo s4 = { 1, &past, 4, &one };
	assert_true(compute_id(1, "main", &s4, NULL) != 0);
	/* Code the layer did not see: unknown. */
	assert_int_equal(compute_id(9, "main", NULL, NULL), 0);
	/* Code given in place of a module. */
	VkShaderModuleCreateInfo inline_code = { VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, NULL, 0,
						 sizeof(code_a), code_a };
	VkComputePipelineCreateInfo ci = { .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO };
	ci.stage = stage(VK_SHADER_STAGE_COMPUTE_BIT, 0, "main");
	ci.stage.pNext = &inline_code;
	struct pipeline_info info;
	pipeline_info_compute(&ci, &lookup, &info);
	assert_int_equal(info.id, compute_id(1, "main", NULL, NULL));
}

static void labels(void **state)
{
	(void)state;
	struct pipeline_info info;
	char text[OBJECT_NAME_MAX + 1];
	compute_id(1, "main", NULL, &info);
	assert_int_equal(pipeline_label(&info, text, sizeof(text)), strlen("pipeline 0000"));
	assert_memory_equal(text, "pipeline ", 9);
	char hex[8];
	snprintf(hex, sizeof(hex), "%04x", (unsigned)(info.id >> 48));
	assert_string_equal(text + 9, hex);
	compute_id(1, "gblur", NULL, &info);
	pipeline_label(&info, text, sizeof(text));
	snprintf(hex, sizeof(hex), "%04x", (unsigned)(info.id >> 48));
	assert_memory_equal(text, "gblur ", 6);
	assert_string_equal(text + 6, hex);
	/* Long entry points are cut at a character boundary. */
	compute_id(1, "éééééééééééééééééééé", NULL, &info);
	assert_int_equal(strlen(info.entry), 32);
	compute_id(1, "aéééééééééééééééééééé", NULL, &info);
	assert_int_equal(strlen(info.entry), 31);
	/* Unknown: no name. */
	compute_id(9, "gblur", NULL, &info);
	assert_int_equal(pipeline_label(&info, text, sizeof(text)), 0);
	assert_string_equal(text, "");
	assert_int_equal(pipeline_label(NULL, text, sizeof(text)), 0);
	compute_id(1, "gblur", NULL, &info);
	assert_int_equal(pipeline_label(&info, text, 4), 3);
	assert_string_equal(text, "gbl");
}

/* A graphics pipeline of a vertex and a fragment shader. */
struct gfx {
	VkGraphicsPipelineCreateInfo ci;
	VkPipelineShaderStageCreateInfo stages[2];
	VkPipelineInputAssemblyStateCreateInfo ia;
	VkPipelineRenderingCreateInfo rendering;
	VkFormat formats[2];
};

static void gfx_init(struct gfx *g, uint64_t vs, uint64_t fs)
{
	memset(g, 0, sizeof(*g));
	g->stages[0] = stage(VK_SHADER_STAGE_VERTEX_BIT, vs, "main");
	g->stages[1] = stage(VK_SHADER_STAGE_FRAGMENT_BIT, fs, "main");
	g->ia = (VkPipelineInputAssemblyStateCreateInfo){
		VK_STRUCTURE_TYPE_PIPELINE_INPUT_ASSEMBLY_STATE_CREATE_INFO, NULL, 0,
		VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST, VK_FALSE };
	g->ci = (VkGraphicsPipelineCreateInfo){ .sType = VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO };
	g->ci.stageCount = 2;
	g->ci.pStages = g->stages;
	g->ci.pInputAssemblyState = &g->ia;
	g->ci.renderPass = (VkRenderPass)(uint64_t)7;
}

static uint64_t gfx_id(struct gfx *g, struct pipeline_info *out)
{
	struct pipeline_info info;
	pipeline_info_graphics(&g->ci, &lookup, out ? out : &info);
	return (out ? out : &info)->id;
}

static void graphics_identity(void **state)
{
	(void)state;
	struct gfx g;
	struct pipeline_info info;
	gfx_init(&g, 1, 2);
	uint64_t id = gfx_id(&g, &info);
	assert_true(id != 0);
	assert_int_equal(info.topology, VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST + 1);
	assert_int_equal(info.entry_rank, 0);
	/* Other handles of the same code, the stages in another order. */
	gfx_init(&g, 3, 4);
	VkPipelineShaderStageCreateInfo t = g.stages[0];
	g.stages[0] = g.stages[1];
	g.stages[1] = t;
	assert_int_equal(gfx_id(&g, NULL), id);
	/* The code of either stage, the topology, the targets. */
	gfx_init(&g, 2, 2);
	assert_true(gfx_id(&g, NULL) != id);
	gfx_init(&g, 1, 1);
	assert_true(gfx_id(&g, NULL) != id);
	gfx_init(&g, 1, 2);
	g.ia.topology = VK_PRIMITIVE_TOPOLOGY_LINE_LIST;
	assert_true(gfx_id(&g, NULL) != id);
	gfx_init(&g, 1, 2);
	g.ci.renderPass = (VkRenderPass)(uint64_t)8;
	assert_true(gfx_id(&g, NULL) != id);
	gfx_init(&g, 1, 2);
	g.ci.subpass = 1;
	assert_true(gfx_id(&g, NULL) != id);
	/* Dynamic rendering: its formats. */
	gfx_init(&g, 1, 2);
	g.ci.renderPass = VK_NULL_HANDLE;
	g.formats[0] = VK_FORMAT_R8G8B8A8_UNORM;
	g.rendering = (VkPipelineRenderingCreateInfo){ VK_STRUCTURE_TYPE_PIPELINE_RENDERING_CREATE_INFO,
						       NULL, 0, 1, g.formats, VK_FORMAT_D32_SFLOAT,
						       VK_FORMAT_UNDEFINED };
	g.ci.pNext = &g.rendering;
	uint64_t dynamic = gfx_id(&g, NULL);
	assert_true(dynamic != id);
	g.formats[0] = VK_FORMAT_B8G8R8A8_UNORM;
	assert_true(gfx_id(&g, NULL) != dynamic);
	/* Entry points: the fragment shader's says most. */
	gfx_init(&g, 1, 2);
	g.stages[0].pName = "vs_blit";
	gfx_id(&g, &info);
	assert_string_equal(info.entry, "vs_blit");
	g.stages[1].pName = "fs_blit";
	gfx_id(&g, &info);
	assert_string_equal(info.entry, "fs_blit");
	/* A shader the layer did not see. */
	gfx_init(&g, 1, 9);
	assert_int_equal(gfx_id(&g, NULL), 0);
}

/* Where the specification says a state is ignored, a careless program
 * may leave anything: the hash must not read it. */
#define GARBAGE(type) ((const type *)(uintptr_t)8)

/* Libraries of each part, linked: the identity of the pipeline made
 * whole; a missing or unknown library leaves it unknown. */
static void libraries(void **state)
{
	(void)state;
	struct gfx whole;
	gfx_init(&whole, 1, 2);
	whole.stages[1].pName = "fs_blit";
	struct pipeline_info whole_info;
	uint64_t id = gfx_id(&whole, &whole_info);
	static const VkGraphicsPipelineLibraryFlagsEXT parts[4] = {
		VK_GRAPHICS_PIPELINE_LIBRARY_VERTEX_INPUT_INTERFACE_BIT_EXT,
		VK_GRAPHICS_PIPELINE_LIBRARY_PRE_RASTERIZATION_SHADERS_BIT_EXT,
		VK_GRAPHICS_PIPELINE_LIBRARY_FRAGMENT_SHADER_BIT_EXT,
		VK_GRAPHICS_PIPELINE_LIBRARY_FRAGMENT_OUTPUT_INTERFACE_BIT_EXT,
	};
	for (int k = 0; k < 4; k++) {
		VkGraphicsPipelineCreateInfo ci = whole.ci;
		VkGraphicsPipelineLibraryCreateInfoEXT gpl = {
			VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_LIBRARY_CREATE_INFO_EXT, NULL, parts[k] };
		ci.pNext = &gpl;
		ci.flags = VK_PIPELINE_CREATE_LIBRARY_BIT_KHR;
		if (k != 0)
			ci.pInputAssemblyState = GARBAGE(VkPipelineInputAssemblyStateCreateInfo);
		ci.stageCount = k == 1 || k == 2 ? 1 : 7;
		ci.pStages = k == 1 ? &whole.stages[0] : k == 2 ? &whole.stages[1] :
			     GARBAGE(VkPipelineShaderStageCreateInfo);
		if (k != 3)
			ci.renderPass = (VkRenderPass)(uint64_t)99;
		pipeline_info_graphics(&ci, &lookup, &libs[k]);
		assert_int_equal(libs[k].id, 0); /* a part is not a pipeline */
		assert_int_equal(libs[k].part_flags, parts[k]);
		assert_false(libs[k].unknown);
	}
	VkPipeline handles[4] = { (VkPipeline)(uint64_t)100, (VkPipeline)(uint64_t)101,
				  (VkPipeline)(uint64_t)102, (VkPipeline)(uint64_t)103 };
	VkPipelineLibraryCreateInfoKHR link = { VK_STRUCTURE_TYPE_PIPELINE_LIBRARY_CREATE_INFO_KHR, NULL,
						4, handles };
	VkGraphicsPipelineCreateInfo linked = { .sType = VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO,
						.pNext = &link };
	linked.stageCount = 3;
	linked.pStages = GARBAGE(VkPipelineShaderStageCreateInfo);
	linked.pInputAssemblyState = GARBAGE(VkPipelineInputAssemblyStateCreateInfo);
	struct pipeline_info info;
	pipeline_info_graphics(&linked, &lookup, &info);
	assert_int_equal(info.id, id);
	assert_int_equal(info.topology, whole_info.topology);
	assert_string_equal(info.entry, "fs_blit");

	/* Two parts from libraries, two of its own. */
	VkGraphicsPipelineLibraryCreateInfoEXT rest = {
		VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_LIBRARY_CREATE_INFO_EXT, NULL, parts[2] | parts[3] };
	link.libraryCount = 2;
	link.pNext = &rest;
	VkGraphicsPipelineCreateInfo mixed = whole.ci;
	mixed.pNext = &link;
	mixed.pStages = &whole.stages[1];
	mixed.stageCount = 1;
	mixed.pInputAssemblyState = GARBAGE(VkPipelineInputAssemblyStateCreateInfo);
	pipeline_info_graphics(&mixed, &lookup, &info);
	assert_int_equal(info.id, id);

	/* A library the layer does not know, or one of unknown code. */
	link.pNext = NULL;
	link.libraryCount = 4;
	handles[3] = (VkPipeline)(uint64_t)999;
	pipeline_info_graphics(&linked, &lookup, &info);
	assert_int_equal(info.id, 0);
	handles[3] = (VkPipeline)(uint64_t)103;
	libs[2].unknown = true;
	pipeline_info_graphics(&linked, &lookup, &info);
	assert_int_equal(info.id, 0);
	libs[2].unknown = false;
	/* Parts missing: not a whole pipeline. */
	link.libraryCount = 3;
	pipeline_info_graphics(&linked, &lookup, &info);
	assert_int_equal(info.id, 0);
}

/* Mesh pipelines have no input assembly to read. */
static void mesh(void **state)
{
	(void)state;
	struct gfx g;
	gfx_init(&g, 1, 2);
	g.stages[0].stage = VK_SHADER_STAGE_MESH_BIT_EXT;
	g.ci.pInputAssemblyState = GARBAGE(VkPipelineInputAssemblyStateCreateInfo);
	struct pipeline_info info;
	assert_true(gfx_id(&g, &info) != 0);
	assert_int_equal(info.topology, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(hash_is_stable),
		cmocka_unit_test(compute_identity),
		cmocka_unit_test(labels),
		cmocka_unit_test(graphics_identity),
		cmocka_unit_test(libraries),
		cmocka_unit_test(mesh),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
