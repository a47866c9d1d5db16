// Seeded-bug selection for the reference kernels.
//
// A variant is built with -DWSV_BUG=<check-name> (for example -DWSV_BUG=mbarrier-initial-phase),
// the same kebab-case name as the wsv check that must catch it. The name is compared as a string
// at compile time, so kernels write
//     constexpr uint32_t kProducerPhase = wsv_bug("mbarrier-initial-phase") ? 0 : 1;
// or `if constexpr (wsv_bug("..."))`, and mark the changed line with `// BUG(<check>): ...`.
#pragma once

#define WSV_STRINGIFY_(x) #x
#define WSV_STRINGIFY(x) WSV_STRINGIFY_(x)

#ifdef WSV_BUG
// Stringizing keeps the name as written: no spaces are inserted between `mbarrier`, `-`, ...
#define WSV_BUG_NAME WSV_STRINGIFY(WSV_BUG)
#else
#define WSV_BUG_NAME ""
#endif

__host__ __device__ constexpr bool wsv_str_equal(const char* a, const char* b) {
  return *a == *b && (*a == '\0' || wsv_str_equal(a + 1, b + 1));
}

// True in the variant built with -DWSV_BUG=<name>.
__host__ __device__ constexpr bool wsv_bug(const char* name) {
  return wsv_str_equal(WSV_BUG_NAME, name);
}
