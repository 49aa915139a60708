/* turbokv's C API: a flash-attention decode engine over a compressed KV cache, on Vulkan compute,
 * to embed as an inference engine's attention backend. Pure C (C99); a thin layer over the C++ API
 * (turbokv/turbokv.hpp), whose header comments hold the full semantics.
 *
 * Errors: every function that can fail returns a tkv_status; TKV_SUCCESS is 0. No exception
 * crosses this API: library errors, std::bad_alloc (TKV_ERROR_OUT_OF_MEMORY) and anything else
 * (TKV_ERROR_INTERNAL) become status codes. tkv_last_error() returns the message of the calling
 * thread's most recent failure ("decode: layer 40 is out of range (the cache has 32)"). Output
 * handles are set to NULL when a create call fails. A NULL handle or pointer argument (where not
 * documented as optional) is TKV_ERROR_INVALID_ARGUMENT.
 *
 * Handles and lifetime: tkv_engine, tkv_cache and tkv_decoder are opaque. A cache keeps its engine
 * alive and a decoder its cache, so destroy calls may come in any order; the object goes when its
 * last user does. Destroy functions accept NULL. Work recorded into the host's command buffers
 * must complete before the objects it uses are destroyed; an adopted engine's objects must be
 * destroyed before the host destroys its VkDevice.
 *
 * Threads: an engine and the caches and decoders made from it are used by one thread at a time
 * (the caller serialises); different engines may be used from different threads at once. Calls
 * that take host memory (tkv_cache_append, tkv_decode, tkv_cache_save / _load) submit to the
 * engine's queue and wait: the host must not use that VkQueue from another thread meanwhile.
 * Recording calls never touch the queue. tkv_last_error is per thread.
 *
 * Recording into the host's command buffer (tkv_cache_record_append, tkv_decoder_record): a
 * primary command buffer of the engine's device, in the recording state, from a pool of the
 * engine's queue family, submitted to a queue of that family. The recorded commands begin and end
 * with a memory barrier from compute-shader and transfer writes to compute-shader and transfer
 * reads and writes (tkv_engine_record_barrier records the same). So inputs written earlier by
 * compute shaders or transfer commands need no barrier of the host's, nor do host writes to mapped
 * memory made before vkQueueSubmit; writes by other stages need the host's barrier to
 * VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT / VK_ACCESS_SHADER_READ_BIT. Afterwards the outputs are
 * visible to compute-shader and transfer reads; other consumers (the host reading mapped memory,
 * graphics stages) need the host's barrier from VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT /
 * VK_ACCESS_SHADER_WRITE_BIT. Device buffers need VK_BUFFER_USAGE_STORAGE_BUFFER_BIT; offsets are
 * multiples of the element size. Lengths and pages change when a call records, not when the GPU
 * runs it; before a host-memory call or a page-freeing call (truncate, remove) on the same cache,
 * the recorded work must have completed.
 *
 * Layouts (row-major, contiguous; f16 = IEEE binary16 as uint16_t):
 *   K / V rows  [n_tokens][kv_heads][head_dim]            (all layers: [layers][n_tokens][...])
 *   q, out      [batch][m][q_heads][head_dim]             q_heads = kv_heads x (1..16)
 * The m queries of a sequence are its m newest tokens, already appended: query i attends to
 * positions [0, length - m + i]. */
#ifndef TURBOKV_TURBOKV_H
#define TURBOKV_TURBOKV_H

#include <stddef.h>
#include <stdint.h>
#include <vulkan/vulkan.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tkv_status {
  TKV_SUCCESS = 0,
  TKV_ERROR_INVALID_ARGUMENT = 1, /* bad shapes, unknown names, out-of-range values, NULL arguments */
  TKV_ERROR_CAPACITY = 2,         /* the cache or a buffer has no room */
  TKV_ERROR_NOT_FOUND = 3,        /* unknown sequence or device */
  TKV_ERROR_NUMERIC = 4,          /* NaN / Inf in input rows */
  TKV_ERROR_VULKAN = 5,           /* a Vulkan call failed (the message names it and its VkResult) */
  TKV_ERROR_NO_DEVICE = 6,        /* no usable Vulkan device */
  TKV_ERROR_IO = 7,               /* file reading / writing / parsing */
  TKV_ERROR_OUT_OF_MEMORY = 8,    /* host memory allocation failed */
  TKV_ERROR_INTERNAL = 9,         /* any other failure (a bug: please report the message) */
  TKV_ERROR_DEVICE_LOST = 10      /* the device was lost: destroy the engine's objects, make a new engine */
} tkv_status;

typedef enum tkv_kv_type {
  TKV_KV_F16 = 0,
  TKV_KV_Q8_0 = 1,
  TKV_KV_TURBO2 = 2,
  TKV_KV_TURBO3 = 3,
  TKV_KV_TURBO4 = 4
} tkv_kv_type;

typedef enum tkv_format { TKV_FORMAT_F32 = 0, TKV_FORMAT_F16 = 1 } tkv_format;

typedef enum tkv_variant {
  TKV_VARIANT_LUT8 = 0,
  TKV_VARIANT_MAG4 = 1,
  TKV_VARIANT_ALU = 2,
  TKV_VARIANT_REGLUT = 3,
  TKV_VARIANT_QLUT = 4,
  TKV_VARIANT_SMEM = 5,
  TKV_VARIANT_TC = 6, /* tensor cores (VK_NV_cooperative_matrix), turbo K and V */
  TKV_VARIANT_AUTOMATIC = 255 /* the dispatch policy's choice */
} tkv_variant;

/* As a layer argument: every layer (tkv_cache_append) or the length on all layers (tkv_cache_length). */
#define TKV_ALL_LAYERS UINT32_MAX

typedef struct tkv_engine tkv_engine;
typedef struct tkv_cache tkv_cache;
typedef struct tkv_decoder tkv_decoder;

/* ---- Errors and version --------------------------------------------------------------------- */

/* "MAJOR.MINOR.PATCH"; static storage. */
const char* tkv_version(void);
/* "TKV_ERROR_CAPACITY"; static storage; "unknown status" for values not listed above. */
const char* tkv_status_name(tkv_status status);
/* The message of the calling thread's most recent failed call ("" when none). Valid until the
 * next failing call on this thread. */
const char* tkv_last_error(void);
/* Forgets the calling thread's last message. */
void tkv_clear_last_error(void);

/* ---- Engine ----------------------------------------------------------------------------------- */

typedef struct tkv_engine_options {
  const char* device;         /* index ("1") or name substring; NULL / "": TKV_DEVICE, else the best */
  const char* cache_dir;      /* on-disk pipeline cache; NULL / "": TKV_CACHE_DIR, else ~/.cache/turbokv */
  int persist_pipeline_cache; /* non-zero: read and write the on-disk pipeline cache (default 1) */
  int validation;             /* non-zero: Khronos validation layer on the engine's own instance */
  unsigned wait_timeout_ms;   /* a call's wait for its GPU work before failing; 0: 60 s on GPUs, 10 min on
                                 CPU drivers (timed-out work keeps running; new work is refused until it ends) */
} tkv_engine_options;

/* Fills the defaults. */
void tkv_engine_options_init(tkv_engine_options* options);

/* An engine with its own Vulkan instance and device. options may be NULL (defaults). */
tkv_status tkv_engine_create(const tkv_engine_options* options, tkv_engine** engine);

/* The host application's Vulkan objects (the host keeps ownership). */
typedef struct tkv_vulkan_device {
  VkInstance instance;
  uint32_t instance_api_version;        /* VkApplicationInfo::apiVersion; >= VK_API_VERSION_1_2 */
  VkPhysicalDevice physical_device;     /* one of the instance's */
  VkDevice device;
  const VkDeviceCreateInfo* create_info; /* what the device was created with; read during the call */
  VkQueue queue;                        /* where the host submits the engine's work */
  uint32_t queue_family_index;          /* the queue's family; must support compute */
} tkv_vulkan_device;

/* What a device must enable for tkv_engine_adopt: the extensions and each feature set to VK_TRUE. */
typedef struct tkv_device_requirements {
  uint32_t extension_count;
  const char* extensions[4];            /* static strings */
  uint32_t optional_extension_count;    /* used when enabled, never required */
  const char* optional_extensions[4];
  VkBool32 shader_int16;                /* VkPhysicalDeviceFeatures */
  VkBool32 shader_int64;                /* VkPhysicalDeviceFeatures */
  VkBool32 storage_buffer_16bit_access; /* VkPhysicalDeviceVulkan11Features */
  VkBool32 storage_buffer_8bit_access;  /* VkPhysicalDeviceVulkan12Features */
  VkBool32 shader_float16;              /* VkPhysicalDeviceVulkan12Features */
  VkBool32 shader_int8;                 /* VkPhysicalDeviceVulkan12Features */
  VkBool32 vulkan_memory_model;         /* VkPhysicalDeviceVulkan12Features vulkanMemoryModel and
                                           vulkanMemoryModelDeviceScope: optional (the tensor-core
                                           kernels); both or neither */
} tkv_device_requirements;

/* The requirements for one of the instance's physical devices. TKV_ERROR_NO_DEVICE (with the
 * reason) when it cannot run the engine at all. */
tkv_status tkv_get_device_requirements(VkInstance instance, VkPhysicalDevice physical_device,
                                       tkv_device_requirements* requirements);

/* An engine on the host's device and queue: never destroys them, never waits for the whole device;
 * creates a command pool, a fence and pipelines on the device. Checks device->create_info against
 * tkv_get_device_requirements: TKV_ERROR_INVALID_ARGUMENT names each missing extension or
 * feature. options may be NULL; its device and validation fields are ignored. */
tkv_status tkv_engine_adopt(const tkv_vulkan_device* device, const tkv_engine_options* options, tkv_engine** engine);

/* Releases the caller's reference (NULL is ignored). */
void tkv_engine_destroy(tkv_engine* engine);

typedef struct tkv_device_info {
  char name[256];
  char device_class[16];  /* "discrete", "integrated", "virtual", "cpu", "other" */
  char driver_name[256];
  uint32_t vendor_id;
  uint32_t device_id;
  uint32_t api_version;
  uint32_t subgroup_size;
  uint32_t compute_units; /* 0 when the driver does not say */
  uint64_t device_local_bytes;
  int adopted;            /* non-zero: the host's device */
} tkv_device_info;

tkv_status tkv_engine_get_info(const tkv_engine* engine, tkv_device_info* info);

/* Records the engine's barrier (compute-shader and transfer writes -> compute-shader and transfer
 * reads and writes) into the host's command buffer. */
tkv_status tkv_engine_record_barrier(const tkv_engine* engine, VkCommandBuffer command_buffer);

/* ---- Cache ------------------------------------------------------------------------------------ */

typedef struct tkv_cache_config {
  uint32_t layers;
  uint32_t kv_heads;         /* KV heads this cache holds (a shard's share of the model's) */
  uint32_t head_dim;         /* 1..256 */
  tkv_kv_type k_type;
  tkv_kv_type v_type;
  uint32_t page_size;        /* tokens per page: a multiple of 16, at most 4096 (default 64) */
  uint64_t capacity_tokens;  /* across all sequences, rounded up to whole pages */
  uint32_t max_sequences;    /* live sequences at once, 1..65536 (default 64) */
} tkv_cache_config;

/* Fills the defaults (f16 types, page 64, 64 sequences; shape fields 0). */
void tkv_cache_config_init(tkv_cache_config* config);

/* Allocates the whole capacity on the engine's device. */
tkv_status tkv_cache_create(tkv_engine* engine, const tkv_cache_config* config, tkv_cache** cache);
void tkv_cache_destroy(tkv_cache* cache);

tkv_status tkv_cache_create_sequence(tkv_cache* cache, uint32_t* sequence);
/* Frees the sequence's pages; its id stops being valid. */
tkv_status tkv_cache_remove_sequence(tkv_cache* cache, uint32_t sequence);
/* Drops positions >= length on every layer. */
tkv_status tkv_cache_truncate(tkv_cache* cache, uint32_t sequence, uint32_t length);
/* Tokens of a sequence on `layer`, or present on every layer with TKV_ALL_LAYERS. */
tkv_status tkv_cache_length(const tkv_cache* cache, uint32_t sequence, uint32_t layer, uint32_t* length);

/* Quantizes and appends n_tokens rows of K and V from host memory to `layer` ([n_tokens][kv_heads]
 * [head_dim] each), or to every layer with TKV_ALL_LAYERS ([layers][n_tokens][kv_heads][head_dim]);
 * submits and waits. Rows with NaN / Inf are rejected (TKV_ERROR_NUMERIC) before anything changes;
 * a full cache is TKV_ERROR_CAPACITY with nothing changed. */
tkv_status tkv_cache_append(tkv_cache* cache, uint32_t sequence, uint32_t layer, uint32_t n_tokens, const void* k,
                            tkv_format k_format, const void* v, tkv_format v_format);

/* A range of one of the host's VkBuffers: `bytes` bytes from `offset`. */
typedef struct tkv_device_span {
  VkBuffer buffer;
  VkDeviceSize offset;  /* bytes; a multiple of the element size */
  VkDeviceSize bytes;   /* bytes available from offset */
  tkv_format format;
} tkv_device_span;

/* Records the append of n_tokens rows of one layer from the host's buffers into the host's command
 * buffer (see "Recording" above); nothing is submitted, values are not checked. */
tkv_status tkv_cache_record_append(tkv_cache* cache, VkCommandBuffer command_buffer, uint32_t sequence, uint32_t layer,
                                   uint32_t n_tokens, const tkv_device_span* k, const tkv_device_span* v);

typedef struct tkv_cache_memory {
  uint64_t bytes_per_token;  /* device bytes per token over all layers, heads, K and V */
  uint64_t total_bytes;      /* device bytes held (pools and page tables) */
  uint64_t capacity_tokens;  /* whole pages */
  uint64_t free_tokens;      /* in pages no sequence holds */
} tkv_cache_memory;

tkv_status tkv_cache_get_memory(const tkv_cache* cache, tkv_cache_memory* memory);

/* ---- Cache files ------------------------------------------------------------------------------
 * A cache file holds sequences' K and V as the reference bytes of kv-formats.md (what the cache
 * stores, bit for bit) with each sequence's length per layer, the types and shape, a format version
 * and XXH3-64 checksums; it loads into any cache with the same K / V types, head_dim, kv_heads and
 * layers, whatever its page size or device. A loaded sequence decodes exactly as the saved one did
 * in a cache of the same page size on the same device (the same plan); otherwise to float rounding.
 * Save and load are host-memory calls (they submit to the engine's queue and wait; see "Threads"
 * above); work recorded on the cache must have completed before them. Paths are NUL-terminated
 * and used as given (relative ones from the working directory). Files are streamed in chunks of
 * about 1 MiB. */

/* Writes `count` sequences (in that order, each at most once, with their length on every layer)
 * to the file `path`: written under a temporary name beside it, then renamed over it, so that a
 * reader never sees half a file and `path` is untouched on failure. sequences may be NULL when
 * count is 0 (a file with no sequence). TKV_ERROR_NOT_FOUND for an unknown sequence,
 * TKV_ERROR_INVALID_ARGUMENT for one listed twice (nothing written), TKV_ERROR_IO naming the path
 * and the reason when the file cannot be written. The cache does not change. */
tkv_status tkv_cache_save(const tkv_cache* cache, const uint32_t* sequences, uint32_t count, const char* path);
/* The same for every live sequence of the cache, in slot order. */
tkv_status tkv_cache_save_all(const tkv_cache* cache, const char* path);

/* Adds the file's sequences to the cache as new sequences: their ids go to sequences[0..*count),
 * in the file's order (sequences[i] holds the file's sequence i). `capacity` is the number of
 * elements the sequences array has (it may be NULL when capacity is 0). The whole file is checked
 * before anything is created. On failure *count is 0 (except as below) and the cache is left as it
 * was (sequences, lengths, contents, free tokens and slots):
 *   TKV_ERROR_CAPACITY          the array holds fewer than the file's sequences: *count is set to
 *                               the number the file holds (call again with that capacity); or
 *                               the cache lacks free sequence slots or pages for them
 *   TKV_ERROR_IO                unreadable, truncated, corrupt (a checksum differs), not a cache
 *                               file, or of a newer format version
 *   TKV_ERROR_INVALID_ARGUMENT  the file's types or shape differ from the cache's (named)
 * When capacity is below the cache's free sequence slots the file is inspected first (one more
 * read of it); tkv_cache_file_inspect's sequence_count says how large an array a file needs. */
tkv_status tkv_cache_load(tkv_cache* cache, const char* path, uint32_t* sequences, uint32_t capacity,
                          uint32_t* count);

/* What a cache file's header says. */
typedef struct tkv_cache_file_info {
  uint32_t version;         /* format version (this build writes 1) */
  tkv_kv_type k_type;
  tkv_kv_type v_type;
  uint32_t head_dim;
  uint32_t kv_heads;
  uint32_t layers;
  uint32_t sequence_count;  /* sequences in the file */
  uint64_t tokens;          /* sum over its sequences of their longest layer's length */
  uint64_t file_bytes;      /* the whole file */
} tkv_cache_file_info;

/* Checks the whole file (magic, version, header, size, both checksums) and fills *info, without an
 * engine or a cache (no Vulkan). TKV_ERROR_IO as tkv_cache_load. Keeps no state: any thread. */
tkv_status tkv_cache_file_inspect(const char* path, tkv_cache_file_info* info);

/* ---- Decoder ---------------------------------------------------------------------------------- */

typedef struct tkv_decode_options {
  float scale;          /* softmax scale; 0: 1 / sqrt(head_dim) */
  float softcap;        /* logit soft-cap: cap * tanh(s / cap); 0: off */
  uint32_t window;      /* attend to the last `window` positions only; 0: off */
  uint32_t splits;      /* split-K count; 0: the plan's */
  tkv_variant variant;  /* TKV_VARIANT_AUTOMATIC: the dispatch policy's */
} tkv_decode_options;

/* Fills the defaults (all 0, variant automatic). */
void tkv_decode_options_init(tkv_decode_options* options);

/* q_heads = kv_heads x 1..16. Loads the device's dispatch policy. */
tkv_status tkv_decoder_create(tkv_cache* cache, uint32_t q_heads, tkv_decoder** decoder);
void tkv_decoder_destroy(tkv_decoder* decoder);

/* Attention of m queries per sequence for `batch` sequences on `layer`, from and to host memory;
 * submits and waits. q_bytes must be batch x m x q_heads x head_dim x element size; out_bytes at
 * least that. options may be NULL (defaults). */
tkv_status tkv_decode(tkv_decoder* decoder, uint32_t layer, const uint32_t* sequences, uint32_t batch, uint32_t m,
                      const void* q, size_t q_bytes, tkv_format q_format, void* out, size_t out_bytes,
                      tkv_format out_format, const tkv_decode_options* options);

/* Records the same call into the host's command buffer (see "Recording" above), reading q from and
 * writing out to the host's buffers. Nothing is submitted. */
tkv_status tkv_decoder_record(tkv_decoder* decoder, VkCommandBuffer command_buffer, uint32_t layer,
                              const uint32_t* sequences, uint32_t batch, uint32_t m, const tkv_device_span* q,
                              const tkv_device_span* out, const tkv_decode_options* options);
/* Appends each sequence's m new tokens to `layer` (k, v: [batch][m][kv_heads][head_dim] each) and
 * decodes their m queries, in one call: what tkv_cache_record_append for every sequence followed
 * by tkv_decoder_record computes; one dispatch (an append and a decode where the device's shared
 * memory cannot hold the fused kernel). The sequences must be
 * distinct; nothing changes on error. */
tkv_status tkv_decoder_record_append_decode(tkv_decoder* decoder, VkCommandBuffer command_buffer, uint32_t layer,
                                            const uint32_t* sequences, uint32_t batch, uint32_t m,
                                            const tkv_device_span* k, const tkv_device_span* v,
                                            const tkv_device_span* q, const tkv_device_span* out,
                                            const tkv_decode_options* options);

typedef struct tkv_plan {
  uint32_t splits;        /* splits per sequence; 1: no reduce pass */
  uint32_t chunk;         /* tokens per split */
  uint32_t workgroup;     /* invocations per workgroup */
  uint32_t workgroups;    /* decode workgroups launched */
  uint32_t shared_bytes;  /* shared memory per workgroup */
  tkv_variant variant;
  char description[1024]; /* the whole plan and why, truncated to fit */
} tkv_plan;

/* The plan a call with these arguments would run with; no GPU work. */
tkv_status tkv_decoder_plan(const tkv_decoder* decoder, uint32_t layer, const uint32_t* sequences, uint32_t batch,
                            uint32_t m, const tkv_decode_options* options, tkv_plan* plan);

#ifdef __cplusplus
}
#endif

#endif /* TURBOKV_TURBOKV_H */
