/* SPDX-License-Identifier: MIT */
/*
 * pipeline_id.c: the identity of a pipeline, made when it is created: a
 * 64-bit hash of its shaders' code, entry points and specialization
 * constants and of the state that tells its variants apart, never of a
 * handle or a pointer, so the same pipeline of the same program has the
 * same identity in every frame, run and process (layer/LAYER.md).
 */
#include "layer_internal.h"

#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* The hash                                                                 */
/* ------------------------------------------------------------------------ */

#define K1 UINT64_C(0x9E3779B97F4A7C15)
#define K2 UINT64_C(0xC2B2AE3D27D4EB4F)

static inline uint64_t rotl(uint64_t x, int r)
{
	return x << r | x >> (64 - r);
}

static inline uint64_t mix_word(uint64_t h, uint64_t w)
{
	return rotl(h ^ (w * K2), 31) * K1;
}

/* Eight bytes at a time: SPIR-V modules run to megabytes, and programs
 * create thousands while they load. The length goes in first, so that
 * "ab" + "c" and "a" + "bc" differ. */
uint64_t pipeline_hash(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;
	h = mix_word(h, (uint64_t)len);
	for (; len >= 8; p += 8, len -= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		h = mix_word(h, w);
	}
	uint64_t tail = 0;
	for (size_t i = 0; i < len; i++)
		tail |= (uint64_t)p[i] << (8 * i);
	return mix_word(h, tail);
}

static uint64_t hash_u64(uint64_t h, uint64_t v)
{
	return mix_word(h, v);
}

/* Every bit of the state ends up in every bit of the result, the top 16
 * of which are shown. Never 0, which means unknown. */
static uint64_t finish(uint64_t h)
{
	h ^= h >> 33;
	h *= UINT64_C(0xff51afd7ed558ccd);
	h ^= h >> 33;
	h *= UINT64_C(0xc4ceb9fe1a85ec53);
	h ^= h >> 33;
	return h ? h : 1;
}

uint64_t shader_code_hash(const void *code, size_t bytes)
{
	if (!code)
		return 0;
	return finish(pipeline_hash(UINT64_C(0x5350495256), code, bytes));
}

/* ------------------------------------------------------------------------ */
/* Stages                                                                   */
/* ------------------------------------------------------------------------ */

/* The stage whose entry point names a pipeline best, when it says more
 * than "main": its compute shader, else its fragment shader, then the
 * others from the most telling. Lower is better. */
static uint8_t entry_rank(VkShaderStageFlagBits stage)
{
	switch (stage) {
	case VK_SHADER_STAGE_COMPUTE_BIT: return 1;
	case VK_SHADER_STAGE_FRAGMENT_BIT: return 2;
	case VK_SHADER_STAGE_MESH_BIT_EXT: return 3;
	case VK_SHADER_STAGE_VERTEX_BIT: return 4;
	case VK_SHADER_STAGE_TASK_BIT_EXT: return 5;
	case VK_SHADER_STAGE_GEOMETRY_BIT: return 6;
	case VK_SHADER_STAGE_TESSELLATION_EVALUATION_BIT: return 7;
	case VK_SHADER_STAGE_TESSELLATION_CONTROL_BIT: return 8;
	default: return 9;
	}
}

/* The length of at most `max` bytes of s, not cutting a UTF-8 sequence. */
static size_t cut(const char *s, size_t max)
{
	size_t len = strnlen(s, max + 1);
	if (len <= max)
		return len;
	len = max;
	while (len > 0 && ((unsigned char)s[len] & 0xC0) == 0x80)
		len--;
	return len;
}

/* Keeps the stage's entry point as the pipeline's name when it says
 * something and no better stage's does. */
static void keep_entry(struct pipeline_info *out, VkShaderStageFlagBits stage, const char *entry)
{
	uint8_t rank = entry_rank(stage);
	if (!entry || !*entry || strcmp(entry, "main") == 0 ||
	    (out->entry_rank && out->entry_rank <= rank))
		return;
	size_t len = cut(entry, PIPELINE_ENTRY_MAX);
	memcpy(out->entry, entry, len);
	out->entry[len] = '\0';
	out->entry_rank = rank;
}

/* The code of a stage: its module's, or the module or identifier its
 * pNext holds in place of one (VK_KHR_maintenance5, pipeline libraries,
 * VK_EXT_shader_module_identifier). 0: not known. */
static uint64_t stage_code(const VkPipelineShaderStageCreateInfo *st, const struct pipeline_lookup *lk)
{
	if (st->module)
		return lk->module ? lk->module(lk->user, st->module) : 0;
	for (const VkBaseInStructure *p = st->pNext; p; p = p->pNext) {
		if (p->sType == VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO) {
			const VkShaderModuleCreateInfo *m = (const void *)p;
			return shader_code_hash(m->pCode, m->codeSize);
		}
		if (p->sType == VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_MODULE_IDENTIFIER_CREATE_INFO_EXT) {
			const VkPipelineShaderStageModuleIdentifierCreateInfoEXT *m = (const void *)p;
			if (!m->pIdentifier || !m->identifierSize)
				return 0;
			/* Another kind of name for the code: hashed apart. */
			return finish(pipeline_hash(UINT64_C(0x4944), m->pIdentifier, m->identifierSize));
		}
	}
	return 0;
}

/* A stage: which one, its code, its entry point and the values of its
 * specialization constants (by constant ID, as the map places them).
 * false when its code is not known. */
static bool hash_stage(uint64_t *h, const VkPipelineShaderStageCreateInfo *st,
		       const struct pipeline_lookup *lk, struct pipeline_info *out)
{
	uint64_t code = stage_code(st, lk);
	if (!code)
		return false;
	const char *entry = st->pName ? st->pName : "";
	*h = hash_u64(*h, (uint64_t)st->stage);
	*h = hash_u64(*h, code);
	*h = pipeline_hash(*h, entry, strlen(entry));
	const VkSpecializationInfo *sp = st->pSpecializationInfo;
	if (sp && sp->pMapEntries) {
		*h = hash_u64(*h, sp->mapEntryCount);
		for (uint32_t i = 0; i < sp->mapEntryCount; i++) {
			const VkSpecializationMapEntry *e = &sp->pMapEntries[i];
			*h = hash_u64(*h, e->constantID);
			if (sp->pData && e->size <= sp->dataSize && e->offset <= sp->dataSize - e->size)
				*h = pipeline_hash(*h, (const char *)sp->pData + e->offset, e->size);
		}
	}
	keep_entry(out, st->stage, entry);
	return true;
}

/* ------------------------------------------------------------------------ */
/* Pipelines                                                                */
/* ------------------------------------------------------------------------ */

#define ALL_PARTS                                                                                      \
	(VK_GRAPHICS_PIPELINE_LIBRARY_VERTEX_INPUT_INTERFACE_BIT_EXT |                                  \
	 VK_GRAPHICS_PIPELINE_LIBRARY_PRE_RASTERIZATION_SHADERS_BIT_EXT |                               \
	 VK_GRAPHICS_PIPELINE_LIBRARY_FRAGMENT_SHADER_BIT_EXT |                                         \
	 VK_GRAPHICS_PIPELINE_LIBRARY_FRAGMENT_OUTPUT_INTERFACE_BIT_EXT)

static const uint32_t part_bits[PIPELINE_PARTS] = {
	VK_GRAPHICS_PIPELINE_LIBRARY_VERTEX_INPUT_INTERFACE_BIT_EXT,
	VK_GRAPHICS_PIPELINE_LIBRARY_PRE_RASTERIZATION_SHADERS_BIT_EXT,
	VK_GRAPHICS_PIPELINE_LIBRARY_FRAGMENT_SHADER_BIT_EXT,
	VK_GRAPHICS_PIPELINE_LIBRARY_FRAGMENT_OUTPUT_INTERFACE_BIT_EXT,
};

static bool is_pre_raster(VkShaderStageFlagBits stage)
{
	return stage & (VK_SHADER_STAGE_VERTEX_BIT | VK_SHADER_STAGE_TESSELLATION_CONTROL_BIT |
			VK_SHADER_STAGE_TESSELLATION_EVALUATION_BIT | VK_SHADER_STAGE_GEOMETRY_BIT |
			VK_SHADER_STAGE_TASK_BIT_EXT | VK_SHADER_STAGE_MESH_BIT_EXT);
}

/* The shader stages of one part, in the order of their stage bits
 * (the order the program lists them in says nothing). */
static bool hash_stages(uint64_t *h, const VkGraphicsPipelineCreateInfo *ci, bool pre_raster,
			const struct pipeline_lookup *lk, struct pipeline_info *out)
{
	for (uint32_t bit = 1; bit && bit <= VK_SHADER_STAGE_MESH_BIT_EXT; bit <<= 1) {
		if ((is_pre_raster((VkShaderStageFlagBits)bit) != 0) != pre_raster)
			continue;
		for (uint32_t i = 0; i < ci->stageCount; i++)
			if (ci->pStages[i].stage == bit && !hash_stage(h, &ci->pStages[i], lk, out))
				return false;
	}
	return true;
}

/*
 * The four parts of a graphics pipeline as VK_EXT_graphics_pipeline_library
 * divides it, each hashed alone, so that a pipeline linked from libraries
 * has the identity of the same pipeline created whole (Zink links its
 * pipelines first, then swaps in ones created whole):
 *   vertex input: the topology;
 *   pre-rasterization: the shaders before the rasterizer;
 *   fragment shader: the fragment shader;
 *   fragment output: what it draws to (the render pass's attachments and
 *   the subpass, or dynamic rendering's formats).
 * Each is read only where the specification says it counts.
 */
void pipeline_info_graphics(const VkGraphicsPipelineCreateInfo *ci, const struct pipeline_lookup *lk,
			    struct pipeline_info *out)
{
	memset(out, 0, sizeof(*out));
	const VkGraphicsPipelineLibraryCreateInfoEXT *gpl = NULL;
	const VkPipelineLibraryCreateInfoKHR *libs = NULL;
	const VkPipelineRenderingCreateInfo *rendering = NULL;
	for (const VkBaseInStructure *p = ci->pNext; p; p = p->pNext) {
		if (p->sType == VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_LIBRARY_CREATE_INFO_EXT)
			gpl = (const void *)p;
		else if (p->sType == VK_STRUCTURE_TYPE_PIPELINE_LIBRARY_CREATE_INFO_KHR)
			libs = (const void *)p;
		else if (p->sType == VK_STRUCTURE_TYPE_PIPELINE_RENDERING_CREATE_INFO)
			rendering = (const void *)p;
	}
	/* Without the library structure, a library or a pipeline linked
	 * from libraries holds no state of its own; anything else, all. */
	uint32_t own = gpl ? gpl->flags :
		       (ci->flags & VK_PIPELINE_CREATE_LIBRARY_BIT_KHR) ||
				       (libs && libs->libraryCount) ? 0 : ALL_PARTS;
	bool known = true;

	/* The parts its libraries hold. */
	for (uint32_t i = 0; libs && libs->pLibraries && i < libs->libraryCount; i++) {
		const struct pipeline_info *l = lk->library ? lk->library(lk->user, libs->pLibraries[i]) : NULL;
		if (!l || !l->kind || l->unknown) {
			known = false;
			continue;
		}
		for (int k = 0; k < PIPELINE_PARTS; k++)
			if (l->part_flags & part_bits[k]) {
				out->parts[k] = l->parts[k];
				out->part_flags |= part_bits[k];
			}
		if (l->topology)
			out->topology = l->topology;
		if (l->entry_rank && (!out->entry_rank || l->entry_rank < out->entry_rank)) {
			memcpy(out->entry, l->entry, sizeof(out->entry));
			out->entry_rank = l->entry_rank;
		}
	}

	bool mesh = false;
	if ((own & (VK_GRAPHICS_PIPELINE_LIBRARY_PRE_RASTERIZATION_SHADERS_BIT_EXT |
		    VK_GRAPHICS_PIPELINE_LIBRARY_FRAGMENT_SHADER_BIT_EXT)) &&
	    !ci->pStages && ci->stageCount)
		known = false;
	for (uint32_t i = 0; (own & VK_GRAPHICS_PIPELINE_LIBRARY_PRE_RASTERIZATION_SHADERS_BIT_EXT) &&
			     ci->pStages && i < ci->stageCount; i++)
		mesh |= (ci->pStages[i].stage & (VK_SHADER_STAGE_MESH_BIT_EXT | VK_SHADER_STAGE_TASK_BIT_EXT)) != 0;

	for (int k = 0; k < PIPELINE_PARTS && known; k++) {
		if (!(own & part_bits[k]))
			continue;
		uint64_t h = hash_u64(UINT64_C(0x47524150), (uint64_t)k);
		switch (k) {
		case 0:
			/* Mesh pipelines have no input assembly. */
			if (!mesh && ci->pInputAssemblyState) {
				h = hash_u64(h, ci->pInputAssemblyState->topology);
				h = hash_u64(h, ci->pInputAssemblyState->primitiveRestartEnable);
				out->topology = (uintptr_t)ci->pInputAssemblyState->topology + 1;
			}
			break;
		case 1:
		case 2:
			if (ci->pStages)
				known = hash_stages(&h, ci, k == 1, lk, out);
			break;
		case 3:
			if (ci->renderPass) {
				uintptr_t pass = lk->pass ? lk->pass(lk->user, ci->renderPass) : 0;
				h = hash_u64(h, pass);
				h = hash_u64(h, ci->subpass);
			} else if (rendering) {
				h = hash_u64(h, rendering->viewMask);
				h = hash_u64(h, rendering->colorAttachmentCount);
				for (uint32_t i = 0; rendering->pColorAttachmentFormats &&
						     i < rendering->colorAttachmentCount; i++)
					h = hash_u64(h, rendering->pColorAttachmentFormats[i]);
				h = hash_u64(h, rendering->depthAttachmentFormat);
				h = hash_u64(h, rendering->stencilAttachmentFormat);
			}
			break;
		}
		out->parts[k] = finish(h);
		out->part_flags |= part_bits[k];
	}
	out->kind = PIPELINE_GRAPHICS;
	/* A whole pipeline has an identity; a library only its parts'. */
	if (!known || out->part_flags != ALL_PARTS) {
		out->unknown = !known;
		return;
	}
	uint64_t h = UINT64_C(0x4752415048);
	for (int k = 0; k < PIPELINE_PARTS; k++)
		h = hash_u64(h, out->parts[k]);
	out->id = finish(h);
}

void pipeline_info_compute(const VkComputePipelineCreateInfo *ci, const struct pipeline_lookup *lk,
			   struct pipeline_info *out)
{
	memset(out, 0, sizeof(*out));
	out->kind = PIPELINE_COMPUTE;
	uint64_t h = UINT64_C(0x434f4d50);
	if (ci->stage.stage == VK_SHADER_STAGE_COMPUTE_BIT && hash_stage(&h, &ci->stage, lk, out))
		out->id = finish(h);
}

size_t pipeline_label(const struct pipeline_info *p, char *buf, size_t size)
{
	if (!size)
		return 0;
	buf[0] = '\0';
	if (!p || !p->id)
		return 0;
	int n = snprintf(buf, size, "%s %04x", p->entry_rank ? p->entry : "pipeline",
			 (unsigned)(p->id >> 48));
	return n < 0 ? 0 : (size_t)n < size ? (size_t)n : size - 1;
}
