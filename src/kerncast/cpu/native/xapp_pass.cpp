// kerncast XAPP profiler: an LLVM 14 pass plugin that instruments C/C++ code for the
// runtime in xapp_rt.c, which computes XAPP's 39 features while the program runs.
//
// Every defined function is cut into segments: a segment ends at its block's terminator
// or at a call of a function that may itself be instrumented. The pass describes every
// segment in a static table (each operation's class, the operations its operands come
// from, its memory slot) and inserts:
//   - at function entry          __xa_enter(fid)
//   - before every memory access a store of its address into __xa_addr[slot]
//   - at the end of a segment    __xa_seg(sid, direction)   (direction: the branch
//                                condition, the switch value, or 0)
//   - before every return        __xa_exit(fid)
// and a constructor that hands the module's table to __xa_register.
//
// With KERNCAST_XAPP_TIMING=1 in the environment only the entry and exits of the function
// KERNCAST_XAPP_TIMED_FUNCTION are instrumented (none for a region bounded by markers):
// the build that times the region natively.
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"

#include <cstdlib>
#include <map>
#include <string>
#include <vector>

using namespace llvm;

namespace {

// Operation classes; must match xapp_rt.c.
enum OpClass : int32_t {
  C_NONE = 0,   // no operation of its own (phi, casts, address arithmetic): passes readiness on
  C_ARITH = 1,
  C_FP = 2,
  C_MEM = 3,
  C_CTRL = 4,
  C_PHI = 5,
};
enum OpFlag : int32_t {
  F_MUL = 1, F_DIV = 2, F_REM = 4, F_SPF = 8, F_LOAD = 16, F_STORE = 32, F_CALL = 64,
  F_RET = 128, F_BRANCH = 256,
};

constexpr unsigned kMaxSlots = 512;  // memory accesses per segment (__xa_addr's length)

bool isSpecialFunction(StringRef name) {
  static const char *names[] = {"sqrt", "cbrt", "exp", "exp2", "expm1", "log", "log2", "log10",
                                "log1p", "sin", "cos", "tan", "asin", "acos", "atan", "atan2",
                                "sinh", "cosh", "tanh", "pow", "erf", "erfc", "hypot", "sincos"};
  name.consume_front("llvm.");
  name.consume_front("__");
  StringRef base = name.split('.').first;  // llvm.sqrt.f32 -> sqrt
  for (const char *n : names) {
    if (base == n) return true;
    std::string f = std::string(n) + "f";
    if (base == f) return true;
    std::string l = std::string(n) + "l";
    if (base == l) return true;
  }
  return false;
}

bool isInstrumentedCallee(const CallBase &call) {
  const Function *f = call.getCalledFunction();
  if (f == nullptr) return true;  // indirect: may land in instrumented code
  if (f->isIntrinsic()) return false;
  return !f->isDeclaration();
}

struct Op {
  int32_t cls = C_NONE, flags = 0, slot = -1, nops = 0;
  int32_t ops[4] = {-1, -1, -1, -1};
};

struct Builder {
  Module &M;
  LLVMContext &C;
  Type *I32, *I64, *VoidTy;
  GlobalVariable *Addr = nullptr, *Mode = nullptr, *Budget = nullptr, *Exec = nullptr,
                 *LastBlock = nullptr;
  FunctionCallee Enter, Exit, Seg, Fast;
  int32_t nextSlot = 0;  // memory slots of the module so far (__xa_lastblock's length)
  bool timingOnly;
  std::string timedFunction;  // the one function a timing build instruments

  // The table, flattened: every array is emitted as one i32 global.
  std::vector<int32_t> segs;   // per segment: fid, bb id, first op, op count, has-phis
  std::vector<int32_t> ops;    // per op: cls, flags, slot, nops, op0..op3
  std::vector<int32_t> phis;   // per phi table entry: phi value id, pred bb, incoming value id
  std::vector<int32_t> bbPhi;  // per bb: first phi entry, count
  std::vector<int32_t> fninfo;  // per function: first value id, argument count
  std::vector<std::string> fnames;
  int32_t nextValue = 0, nextBB = 0;

  explicit Builder(Module &m)
      : M(m), C(m.getContext()), I32(Type::getInt32Ty(C)), I64(Type::getInt64Ty(C)),
        VoidTy(Type::getVoidTy(C)) {
    const char *t = std::getenv("KERNCAST_XAPP_TIMING");
    timingOnly = t != nullptr && t[0] == '1';
    const char *fn = std::getenv("KERNCAST_XAPP_TIMED_FUNCTION");
    timedFunction = fn != nullptr ? fn : "";
    Enter = M.getOrInsertFunction("__xa_enter", VoidTy, I32);
    Exit = M.getOrInsertFunction("__xa_exit", VoidTy, I32);
    Seg = M.getOrInsertFunction("__xa_seg", VoidTy, I32, I64);
    Fast = M.getOrInsertFunction("__xa_fast", VoidTy, I32);
    if (!timingOnly) {
      Addr = cast<GlobalVariable>(M.getOrInsertGlobal("__xa_addr", ArrayType::get(I64, kMaxSlots)));
      Mode = cast<GlobalVariable>(M.getOrInsertGlobal("__xa_mode", I32));
      Budget = cast<GlobalVariable>(M.getOrInsertGlobal("__xa_budget", I64));
      // arrays the runtime allocates once it knows the module's segments and slots
      Exec = cast<GlobalVariable>(M.getOrInsertGlobal("__xa_exec", PointerType::getUnqual(I64)));
      LastBlock = cast<GlobalVariable>(M.getOrInsertGlobal("__xa_lastblock", PointerType::getUnqual(I64)));
    }
  }

  static Op classify(Instruction &I) {
    Op op;
    unsigned code = I.getOpcode();
    Type *t = I.getType();
    if (isa<PHINode>(I)) { op.cls = C_PHI; return op; }
    if (isa<GetElementPtrInst>(I) || isa<CastInst>(I) || isa<AllocaInst>(I) ||
        isa<FreezeInst>(I)) {
      if (isa<CastInst>(I) && (isa<FPToSIInst>(I) || isa<FPToUIInst>(I) || isa<SIToFPInst>(I) ||
                               isa<UIToFPInst>(I) || isa<FPExtInst>(I) || isa<FPTruncInst>(I)))
        op.cls = C_FP;
      return op;
    }
    if (auto *ci = dyn_cast<CallBase>(&I)) {
      if (isa<DbgInfoIntrinsic>(I) || I.isLifetimeStartOrEnd()) { op.cls = -1; return op; }
      if (auto *mi = dyn_cast<MemIntrinsic>(&I)) {
        (void)mi;
        op.cls = C_MEM;
        op.flags = F_STORE;
        return op;
      }
      Function *f = ci->getCalledFunction();
      StringRef name = f != nullptr ? f->getName() : StringRef("");
      if (f != nullptr && isSpecialFunction(name)) {
        op.cls = C_FP;
        op.flags = F_SPF;
        return op;
      }
      if (f != nullptr && f->isIntrinsic()) {
        if (name.startswith("llvm.fma") || name.startswith("llvm.fmuladd")) {
          op.cls = C_FP;
          op.flags = F_MUL;
        } else if (t->isFPOrFPVectorTy()) {
          op.cls = C_FP;
        } else if (name.startswith("llvm.assume") || name.startswith("llvm.experimental.noalias")) {
          op.cls = -1;
        } else {
          op.cls = C_ARITH;
        }
        return op;
      }
      op.cls = C_CTRL;
      op.flags = F_CALL;
      return op;
    }
    switch (code) {
      case Instruction::Load: op.cls = C_MEM; op.flags = F_LOAD; return op;
      case Instruction::Store: op.cls = C_MEM; op.flags = F_STORE; return op;
      case Instruction::AtomicRMW:
      case Instruction::AtomicCmpXchg: op.cls = C_MEM; op.flags = F_LOAD | F_STORE; return op;
      case Instruction::Br:
        if (cast<BranchInst>(I).isConditional()) { op.cls = C_CTRL; op.flags = F_BRANCH; }
        else op.cls = -1;  // an unconditional branch is layout, not an operation
        return op;
      case Instruction::Switch: op.cls = C_CTRL; op.flags = F_BRANCH; return op;
      case Instruction::IndirectBr: op.cls = C_CTRL; return op;
      case Instruction::Ret: op.cls = C_CTRL; op.flags = F_RET; return op;
      case Instruction::Unreachable: op.cls = -1; return op;
      case Instruction::FAdd: case Instruction::FSub: case Instruction::FNeg:
      case Instruction::FCmp: op.cls = C_FP; return op;
      case Instruction::FMul: op.cls = C_FP; op.flags = F_MUL; return op;
      case Instruction::FDiv: op.cls = C_FP; op.flags = F_DIV; return op;
      case Instruction::FRem: op.cls = C_FP; op.flags = F_REM; return op;
      case Instruction::Mul: op.cls = C_ARITH; op.flags = F_MUL; return op;
      case Instruction::SDiv: case Instruction::UDiv: op.cls = C_ARITH; op.flags = F_DIV; return op;
      case Instruction::SRem: case Instruction::URem: op.cls = C_ARITH; op.flags = F_REM; return op;
      case Instruction::Select:
        op.cls = t->isFPOrFPVectorTy() ? C_FP : C_ARITH;
        return op;
      default:
        op.cls = t->isFPOrFPVectorTy() ? C_FP : C_ARITH;
        return op;
    }
  }

  void addOperands(Op &op, Instruction &I, std::map<Value *, int32_t> &ids) {
    for (Value *v : I.operands()) {
      if (op.nops == 4) break;
      auto it = ids.find(v);
      if (it != ids.end()) op.ops[op.nops++] = it->second;
    }
  }

  // An op record is 9 ints: its value id, class, flags, memory slot, operand count, operands.
  void pushOp(const Op &op, int32_t self) {
    ops.push_back(self);
    ops.push_back(op.cls);
    ops.push_back(op.flags);
    ops.push_back(op.slot);
    ops.push_back(op.nops);
    for (int k = 0; k < 4; k++) ops.push_back(op.ops[k]);
  }

  // A segment's end: where its hook goes, its id, its memory slots, its op count.
  struct SegEnd {
    Instruction *at;
    int32_t sid, nmem, count, firstSlot;
    Value *direction;
  };

  void instrument(Function &F, int32_t fid) {
    // Phase 1, analysis (before any block is split): value ids (arguments first: their
    // readiness is the call's), block ids, the phi table, op records and segments.
    std::map<Value *, int32_t> ids;
    std::map<BasicBlock *, int32_t> bbIds;
    fninfo.push_back(nextValue);
    fninfo.push_back(static_cast<int32_t>(F.arg_size()));
    for (Argument &a : F.args()) ids[&a] = nextValue++;
    for (BasicBlock &bb : F) {
      bbIds[&bb] = nextBB++;
      for (Instruction &I : bb) ids[&I] = nextValue++;
    }
    std::vector<std::pair<Instruction *, unsigned>> accesses;  // memory op, slot
    std::vector<SegEnd> ends;
    for (BasicBlock &bb : F) {
      int32_t firstPhi = static_cast<int32_t>(phis.size() / 3);
      int32_t nPhi = 0;
      for (PHINode &phi : bb.phis()) {
        for (unsigned k = 0; k < phi.getNumIncomingValues(); k++) {
          auto it = ids.find(phi.getIncomingValue(k));
          phis.push_back(ids[&phi]);
          phis.push_back(bbIds[phi.getIncomingBlock(k)]);
          phis.push_back(it == ids.end() ? -1 : it->second);
          nPhi++;
        }
      }
      bbPhi.push_back(firstPhi);
      bbPhi.push_back(nPhi);
      int32_t segFirst = static_cast<int32_t>(ops.size() / 9);
      int32_t segCount = 0;
      unsigned slots = 0;
      bool first = true;
      for (Instruction &I : bb) {
        Op op = classify(I);
        if (op.cls != -1 && op.cls != C_PHI) {  // phis are resolved from the phi table
          addOperands(op, I, ids);
          if ((op.flags & (F_LOAD | F_STORE)) != 0 && accessedPointer(I) != nullptr &&
              slots < kMaxSlots) {
            op.slot = static_cast<int32_t>(slots);
            accesses.emplace_back(&I, slots++);
          }
          pushOp(op, ids[&I]);
          segCount++;
        }
        bool endsSegment = I.isTerminator() || slots >= kMaxSlots;
        if (auto *call = dyn_cast<CallBase>(&I))
          endsSegment = endsSegment || (isInstrumentedCallee(*call) && !isa<IntrinsicInst>(I));
        if (!endsSegment) continue;
        int32_t sid = static_cast<int32_t>(segs.size() / 5);
        segs.push_back(fid);
        segs.push_back(bbIds[&bb]);
        segs.push_back(segFirst);
        segs.push_back(segCount);
        segs.push_back(first ? 1 : 0);
        ends.push_back({&I, sid, static_cast<int32_t>(slots), segCount, nextSlot, nullptr});
        nextSlot += static_cast<int32_t>(slots);
        first = false;
        segFirst = static_cast<int32_t>(ops.size() / 9);
        segCount = 0;
        slots = 0;
      }
    }
    // Phase 2: the hooks.
    IRBuilder<> entry(&*F.getEntryBlock().getFirstInsertionPt());
    entry.CreateCall(Enter, {ConstantInt::get(I32, fid)});
    for (auto &access : accesses) {
      IRBuilder<> b(access.first);
      b.CreateStore(b.CreatePtrToInt(accessedPointer(*access.first), I64), slotPtr(b, Addr, access.second));
    }
    for (SegEnd &end : ends) insertSegmentEnd(end, fid);
  }

  static Value *accessedPointer(Instruction &I) {
    if (auto *ld = dyn_cast<LoadInst>(&I)) return ld->getPointerOperand();
    if (auto *st = dyn_cast<StoreInst>(&I)) return st->getPointerOperand();
    if (auto *rmw = dyn_cast<AtomicRMWInst>(&I)) return rmw->getPointerOperand();
    if (auto *cx = dyn_cast<AtomicCmpXchgInst>(&I)) return cx->getPointerOperand();
    if (auto *mi = dyn_cast<MemIntrinsic>(&I)) return mi->getRawDest();
    return nullptr;
  }

  Value *slotPtr(IRBuilder<> &b, GlobalVariable *array, unsigned slot) {
    return b.CreateConstInBoundsGEP2_64(array->getValueType(), array, 0, slot);
  }

  // Before a segment's last instruction:
  //   mode 2 (a sampled interval):  __xa_seg(sid, direction)
  //   mode 1 (the region, between samples): count the segment, spend the interval's
  //          budget, and call __xa_fast(sid) only when an access left its 64-byte block
  //          or the budget is spent
  //   mode 0 (outside the region): nothing
  void insertSegmentEnd(SegEnd &end, int32_t fid) {
    Instruction *I = end.at;
    IRBuilder<> b(I);
    Value *direction = ConstantInt::get(I64, 0);
    if (auto *br = dyn_cast<BranchInst>(I)) {
      if (br->isConditional()) direction = b.CreateZExt(br->getCondition(), I64);
    } else if (auto *sw = dyn_cast<SwitchInst>(I)) {
      direction = b.CreateSExtOrTrunc(sw->getCondition(), I64);
    }
    Value *mode = b.CreateLoad(I32, Mode);
    Instruction *sampled = nullptr, *other = nullptr;
    SplitBlockAndInsertIfThenElse(b.CreateICmpEQ(mode, ConstantInt::get(I32, 2)), I, &sampled, &other);
    IRBuilder<>(sampled).CreateCall(Seg, {ConstantInt::get(I32, end.sid), direction});
    IRBuilder<> o(other);
    Instruction *fast = SplitBlockAndInsertIfThen(o.CreateICmpEQ(mode, ConstantInt::get(I32, 1)),
                                                  other, false);
    IRBuilder<> f(fast);
    Value *execBase = f.CreateLoad(Exec->getValueType(), Exec);
    Value *lastBase = f.CreateLoad(LastBlock->getValueType(), LastBlock);
    Value *execPtr = f.CreateConstInBoundsGEP1_64(I64, execBase, end.sid);
    f.CreateStore(f.CreateAdd(f.CreateLoad(I64, execPtr), ConstantInt::get(I64, 1)), execPtr);
    Value *budget = f.CreateSub(f.CreateLoad(I64, Budget), ConstantInt::get(I64, end.count));
    f.CreateStore(budget, Budget);
    Value *need = f.CreateICmpSLE(budget, ConstantInt::get(I64, 0));
    for (int32_t k = 0; k < end.nmem; k++) {
      Value *block = f.CreateLShr(f.CreateLoad(I64, slotPtr(f, Addr, k)), 6);
      Value *lastPtr = f.CreateConstInBoundsGEP1_64(I64, lastBase, end.firstSlot + k);
      need = f.CreateOr(need, f.CreateICmpNE(block, f.CreateLoad(I64, lastPtr)));
      f.CreateStore(block, lastPtr);
    }
    Instruction *call = SplitBlockAndInsertIfThen(need, fast, false);
    IRBuilder<>(call).CreateCall(Fast, {ConstantInt::get(I32, end.sid)});
    if (isa<ReturnInst>(I)) IRBuilder<>(I).CreateCall(Exit, {ConstantInt::get(I32, fid)});
  }

  void instrumentTiming(Function &F, int32_t fid) {
    IRBuilder<> entry(&*F.getEntryBlock().getFirstInsertionPt());
    entry.CreateCall(Enter, {ConstantInt::get(I32, fid)});
    for (BasicBlock &bb : F) {
      if (auto *ret = dyn_cast<ReturnInst>(bb.getTerminator())) {
        IRBuilder<> b(ret);
        b.CreateCall(Exit, {ConstantInt::get(I32, fid)});
      }
    }
  }

  GlobalVariable *intArray(const std::vector<int32_t> &v, const char *name) {
    std::vector<Constant *> cs;
    for (int32_t x : v) cs.push_back(ConstantInt::get(I32, x));
    if (cs.empty()) cs.push_back(ConstantInt::get(I32, 0));
    auto *ty = ArrayType::get(I32, cs.size());
    return new GlobalVariable(M, ty, true, GlobalValue::PrivateLinkage, ConstantArray::get(ty, cs),
                              name);
  }

  void emitRegistration() {
    // Function names: one NUL-separated string.
    std::string names;
    for (auto &n : fnames) { names += n; names.push_back('\0'); }
    Constant *namesInit = ConstantDataArray::getString(C, names, true);
    auto *namesVar = new GlobalVariable(M, namesInit->getType(), true, GlobalValue::PrivateLinkage,
                                        namesInit, "__xa_names");
    GlobalVariable *segVar = intArray(segs, "__xa_segs");
    GlobalVariable *opVar = intArray(ops, "__xa_ops");
    GlobalVariable *phiVar = intArray(phis, "__xa_phis");
    GlobalVariable *bbVar = intArray(bbPhi, "__xa_bbphi");
    GlobalVariable *fnVar = intArray(fninfo, "__xa_fninfo");
    Type *i8p = Type::getInt8PtrTy(C);
    Type *i32p = PointerType::getUnqual(I32);
    FunctionCallee reg = M.getOrInsertFunction("__xa_register", VoidTy, I32, i8p, i32p, I32, i32p, I32,
                                               i32p, I32, i32p, I32, i32p, I32, I32, I32);
    Function *ctor = Function::Create(FunctionType::get(VoidTy, false), GlobalValue::InternalLinkage,
                                      "__xa_ctor", &M);
    IRBuilder<> b(BasicBlock::Create(C, "entry", ctor));
    auto first = [&](GlobalVariable *g, Type *to) {
      return b.CreatePointerCast(b.CreateConstInBoundsGEP2_64(g->getValueType(), g, 0, 0), to);
    };
    b.CreateCall(reg, {ConstantInt::get(I32, static_cast<int32_t>(fnames.size())), first(namesVar, i8p),
                       first(fnVar, i32p), ConstantInt::get(I32, static_cast<int32_t>(segs.size() / 5)), first(segVar, i32p),
                       ConstantInt::get(I32, static_cast<int32_t>(ops.size() / 9)), first(opVar, i32p),
                       ConstantInt::get(I32, static_cast<int32_t>(phis.size() / 3)), first(phiVar, i32p),
                       ConstantInt::get(I32, static_cast<int32_t>(bbPhi.size() / 2)), first(bbVar, i32p),
                       ConstantInt::get(I32, nextValue), ConstantInt::get(I32, nextSlot),
                       ConstantInt::get(I32, timingOnly ? 1 : 0)});
    b.CreateRetVoid();
    appendToGlobalCtors(M, ctor, 0);
  }

  void run() {
    std::vector<Function *> fns;
    for (Function &F : M) {
      if (F.isDeclaration() || F.getName().startswith("__xa_")) continue;
      fns.push_back(&F);
    }
    for (Function *F : fns) {
      int32_t fid = static_cast<int32_t>(fnames.size());
      fnames.push_back(F->getName().str());
      if (timingOnly) {
        fninfo.push_back(0);
        fninfo.push_back(0);
        if (F->getName() == timedFunction) instrumentTiming(*F, fid);
      }
      else instrument(*F, fid);
    }
    emitRegistration();
  }
};

struct XappPass : PassInfoMixin<XappPass> {
  PreservedAnalyses run(Module &M, ModuleAnalysisManager &) {
    Builder(M).run();
    return PreservedAnalyses::none();
  }
};

}  // namespace

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo llvmGetPassPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "kerncast-xapp", "1", [](PassBuilder &pb) {
            pb.registerOptimizerLastEPCallback(
                [](ModulePassManager &mpm, OptimizationLevel) { mpm.addPass(XappPass()); });
            pb.registerPipelineParsingCallback(
                [](StringRef name, ModulePassManager &mpm, ArrayRef<PassBuilder::PipelineElement>) {
                  if (name != "kerncast-xapp") return false;
                  mpm.addPass(XappPass());
                  return true;
                });
          }};
}
