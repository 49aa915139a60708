// Cache files of the public API (turbokv::Cache::save / save_all / load, inspect_cache_file) over
// kvcache/persist.hpp.
#include <span>
#include <string>
#include <vector>

#include "kvcache/kv_cache.hpp"
#include "kvcache/persist.hpp"
#include "turbokv/cache.hpp"

namespace turbokv {

void Cache::save(const std::string& path, SequenceList seqs) const {
  tkv::save_sequences(get(), std::span<const SequenceId>(seqs.data(), seqs.size()), path);
}

void Cache::save_all(const std::string& path) const { tkv::save_cache(get(), path); }

std::vector<SequenceId> Cache::load(const std::string& path) { return tkv::load_sequences(get(), path); }

CacheFileInfo inspect_cache_file(const std::string& path) {
  const tkv::CacheFileInfo f = tkv::inspect_cache_file(path);
  CacheFileInfo r;
  r.version = f.version;
  r.k_type = KvType(uint32_t(f.k_type));
  r.v_type = KvType(uint32_t(f.v_type));
  r.head_dim = f.head_dim;
  r.kv_heads = f.kv_heads;
  r.layers = f.layers;
  r.lengths = f.lengths;
  r.file_bytes = f.file_bytes;
  return r;
}

}  // namespace turbokv
