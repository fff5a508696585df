// The instruction set of nkicc's evaluator: one table naming every opcode and its operands, as
// Lua 5.4's lopcodes.h. An instruction is 12 bytes: the opcode, flags, three 16-bit operands
// a, b, c and a 32-bit operand d. R[x] is register x of the frame, K[x] constant x of the code,
// RK(b) is K[b] when the KB flag is set and R[b] otherwise (likewise RK(c) with KC).
//
// Adding an instruction: a line in NKICC_OPCODES, a case in the dispatch loop (machine.cpp),
// and the compiler's emit for the construct (compiler.cpp). Its operands are documented here.
#pragma once

#include <cstdint>
#include <string_view>

namespace nkicc::eval {

// clang-format off
#define NKICC_OPCODES(X)                                                                          \
  X(Nop,          "nothing (a statement that does nothing still counts a step)")               \
  X(Move,         "R[a] = R[b]")                                                                \
  X(LoadConst,    "R[a] = K[d]")                                                                \
  X(LoadNone,     "R[a] = None")                                                                \
  X(LoadBool,     "R[a] = bool(b)")                                                             \
  X(LoadInt,      "R[a] = int32(d)")                                                            \
  X(CheckBound,   "UnboundLocalError for local name d unless R[a] is bound")                    \
  X(Unbind,       "R[a] = unbound (del of a local; UnboundLocalError for name d when unbound)")  \
  X(ClearLocal,   "R[a] = unbound, without a check (the end of an except handler's `as` name)")  \
  X(MakeCell,     "R[a] = a new cell holding R[a] when b, else an empty one")                   \
  X(LoadDeref,    "R[a] = the value of the cell R[b]; d names the variable for errors")         \
  X(StoreDeref,   "the cell R[a] = R[b]")                                                       \
  X(DeleteDeref,  "empty the cell R[a]; d names the variable")                                  \
  X(LoadGlobal,   "R[a] = global or builtin named by cache d")                                  \
  X(StoreGlobal,  "global named d = R[a]")                                                      \
  X(DeleteGlobal, "del global named d")                                                         \
  X(LoadName,     "R[a] = name d from the namespace, then globals, then builtins (class bodies)") \
  X(LoadClassDeref, "R[a] = name d from the namespace, else the cell R[b] (class bodies)")      \
  X(StoreName,    "namespace name d = R[a]")                                                    \
  X(DeleteName,   "del namespace name d")                                                       \
  X(LoadAttr,     "R[a] = R[b].attr (cache d names attr)")                                      \
  X(LoadMethod,   "R[a] = method of R[a+1] named by call site d; R[a+1] = unbound when not one") \
  X(StoreAttr,    "R[a].attr = R[b] (cache d)")                                                 \
  X(DeleteAttr,   "del R[a].attr (name d)")                                                     \
  X(GetItem,      "R[a] = R[b][RK(c)]")                                                         \
  X(SetItem,      "R[a][RK(b)] = R[c]")                                                         \
  X(DeleteItem,   "del R[a][R[b]]")                                                             \
  X(Add,          "R[a] = RK(b) + RK(c)")                                                       \
  X(Sub,          "R[a] = RK(b) - RK(c)")                                                       \
  X(Mul,          "R[a] = RK(b) * RK(c)")                                                       \
  X(Binary,       "R[a] = RK(b) op RK(c), op = BinOpKind d")                                    \
  X(InplaceName,  "R[a] = R[b] op= RK(c) for an augmented assignment to a name (op d)")         \
  X(AugItem,      "R[a][R[b]] op= R[c] (op d)")                                                 \
  X(Unary,        "R[a] = op R[b], op = UnaryOpKind d")                                         \
  X(Not,          "R[a] = not R[b]")                                                            \
  X(Compare,      "R[a] = RK(b) op RK(c), op = CmpOpKind d")                                    \
  X(Jump,         "pc = d")                                                                     \
  X(JumpIfFalse,  "if not R[a]: pc = d")                                                        \
  X(JumpIfTrue,   "if R[a]: pc = d")                                                            \
  X(CmpJumpFalse, "if not (RK(b) op RK(c)): pc = d, op = CmpOpKind a")                          \
  X(CmpJumpTrue,  "if RK(b) op RK(c): pc = d, op = CmpOpKind a")                                \
  X(BuildTuple,   "R[a] = tuple(R[b], ..., R[b+c-1])")                                          \
  X(BuildList,    "R[a] = list(R[b], ..., R[b+c-1])")                                           \
  X(BuildSet,     "R[a] = set(R[b], ..., R[b+c-1])")                                            \
  X(BuildDict,    "R[a] = {R[b]: R[b+1], ...} for c pairs")                                     \
  X(BuildSlice,   "R[a] = slice(R[b], R[b+1], R[b+2])")                                         \
  X(ListAppend,   "R[a].append(R[b])")                                                          \
  X(ListExtend,   "R[a].extend(R[b]) (`*x` in a display or a call)")                            \
  X(ListToTuple,  "R[a] = tuple(R[a])")                                                         \
  X(SetAdd,       "add R[b] to the set R[a] (every item of the list R[b] when c)")                                                   \
  X(DictSet,      "R[a][R[b]] = R[c] (dict displays and comprehensions)")                       \
  X(DictMerge,    "R[a].update(R[b]) for `{**m}` (b) or `f(**m)` (c = 1)")                      \
  X(BuildString,  "R[a] = ''.join(R[b], ..., R[b+c-1]) (f-strings)")                            \
  X(Format,       "R[a] = format(conversion d of R[b], R[b+1] when c)")                         \
  X(Unpack,       "R[a], ..., R[a+c-1] = R[b]; d is the starred position or 0xffff")            \
  X(ForPrep,      "iteration state R[a..a+3] over R[b]; pushes the loop kind")                  \
  X(ForNext,      "R[b] = next item of the iteration R[a], or pc = d when exhausted")           \
  X(ForLoop,      "R[b] = next item of the iteration R[a] and pc = d, or on when exhausted (a loop's end)") \
  X(LoopPush,     "pushes the enclosing loop kind (a while loop)")                              \
  X(LoopPop,      "pops the innermost loop kind")                                               \
  X(Call,         "R[a] = R[b](R[b+1], ..., R[b+c]) with call site d (keywords last)")          \
  X(CallMethod,   "R[a] = R[b].name(R[b+1], ..., R[b+c]) with call site d")                     \
  X(CallEx,       "R[a] = R[b](*R[b+1], **R[b+2]) with call site d")                            \
  X(CallMethodEx, "R[a] = R[b].name(*R[b+1], **R[b+2]) with call site d")                       \
  X(Super,        "R[a] = super(cell R[b]'s class, R[c]) (a zero-argument super())")            \
  X(MakeFunction, "R[a] = function of template d; defaults from R[b] (c of them)")              \
  X(MakeClass,    "R[a] = class of template d; bases R[b], ..., R[b+c-1] (keywords in site)")   \
  X(AddAnnotation, "namespace __annotations__[name d] = K[b] (an annotation's source text)")     \
  X(Return,       "return R[a]")                                                                \
  X(ReturnNone,   "return None")                                                                \
  X(Raise,        "raise R[a] (from R[b] when c)")                                              \
  X(Reraise,      "re-raise the exception R[a] where it was first raised")                      \
  X(ExcMatch,     "R[a] = the exception R[b] is an instance of the class (or tuple) R[c]")      \
  X(WithEnter,    "R[a] = R[b].__enter__(); R[b+1] = R[b].__exit__")                            \
  X(WithExit,     "R[b+1](None, None, None) after a with body")                                 \
  X(WithExitExc,  "R[b+1](type, exc, None) for the exception R[a]; re-raises unless it returns true") \
  X(AssertFail,   "raise AssertionError(str(R[a]) when b, else '')")                           \
  X(ImportName,   "R[a] = the module import d binds")                                           \
  X(ImportFrom,   "R[a] = name c of the module R[b] (import d)")                                \
  X(ImportStar,   "bind every public name of module R[a]")                                      \
  X(Unsupported,  "raise the 'unsupported Python construct' error, construct K[d]")             \
  X(Error,        "raise the Python exception named by K[d] with message K[b]")
// clang-format on

enum class Op : std::uint8_t {
#define NKICC_OPCODE_ENUM(name, doc) name,
  NKICC_OPCODES(NKICC_OPCODE_ENUM)
#undef NKICC_OPCODE_ENUM
};

/// Flags of an instruction.
enum : std::uint8_t {
  kStep = 1,     ///< counts one step (a statement begins) before the instruction runs
  kBind = 2,     ///< R[a] was assigned to a name: Object::on_bind(the name)
  kConstB = 4,   ///< operand b is a constant index
  kConstC = 8,   ///< operand c is a constant index
  kRecycle = 16, ///< GetItem: R[c] is a key made for this subscript, whose records may be reused
};

struct Insn {
  Op op;
  std::uint8_t flags = 0;
  std::uint16_t a = 0, b = 0, c = 0;
  std::uint32_t d = 0;
};
static_assert(sizeof(Insn) == 12);

inline constexpr std::uint16_t kNoReg = 0xffff;

} // namespace nkicc::eval
