// TypeKey names one element-type signature at a call site: its address is
// the scheduler's key (one pointer compare), its name what persisted history
// finds it by in another process. type_tag makes one per signature.
//
// Thread-safety: immutable objects with static storage.
#pragma once

#include <typeinfo>

namespace veda::detail {

struct TypeKey {
  const char* (*name)();  // the signature's mangled type name
};

template <class... T>
struct type_list;
// A pointer's typeid: the types may be incomplete. Asked for only when
// history is saved or loaded, never per call.
template <class... T>
const char* type_list_name() {
  return typeid(type_list<T...>*).name();
}
template <class... T>
inline constexpr TypeKey type_tag{&type_list_name<T...>};

}  // namespace veda::detail
