"""kerncast.ptx: the PTX parser, its typed IR, CFG analyses and the printer.

PTX is kerncast's one kernel IR (see ``docs/DESIGN.md``): CUDA C++ and OpenCL C
both become PTX, and the emulator, the simulator and the feature extractors read
only this IR.

``parse(text)`` returns a :class:`Module` of frozen dataclasses; ``to_ptx(module)``
prints it back. Per function, ``build_cfg(function)`` gives the basic blocks and
the control-flow graph, with dominators, post-dominators, natural loops,
reconvergence points of conditional branches and divergent-branch candidates;
``static_mix`` and ``summarize`` count instructions by :class:`InstrClass`.
"""

from kerncast.ptx._cfg import (CFG, BasicBlock, DomTree, build_cfg, dom_tree, dominators,
                               post_dominators)
from kerncast.ptx._classes import InstrClass
from kerncast.ptx._dataflow import (
    Divergence, Liveness, divergence, liveness, read_registers, written_registers,
)
from kerncast.ptx._errors import PTXSyntaxError
from kerncast.ptx._ir import (
    Address, Alias, CallPrototype, CallSpec, Function, Imm, Instruction, Label, LabelDef,
    Module, Operand, Param, ParamList, Pragma, Reg, RegDecl, RegisterDecl, RegPair, ScopeEnd,
    ScopeStart, Section, Sink, SourceLoc, SpecialReg, Symbol, SymbolRef, TargetList, TexOperand,
    Variable, Vector, float_imm, type_size,
)
from kerncast.ptx._loops import Loop, loops, reconvergence_points
from kerncast.ptx._parser import parse
from kerncast.ptx._printer import format_instruction, to_ptx
from kerncast.ptx._summary import (
    FunctionSummary, LoopSummary, instruction_class, static_mix, summarize, summarize_module,
)

__all__ = [
    # parsing and printing
    "PTXSyntaxError", "format_instruction", "parse", "to_ptx",
    # IR
    "Alias", "CallPrototype", "CallSpec", "Function", "Instruction", "LabelDef", "Module",
    "Param", "Pragma", "RegDecl", "RegisterDecl", "ScopeEnd", "ScopeStart", "Section", "SourceLoc",
    "SymbolRef", "TargetList", "Variable", "float_imm", "type_size",
    # operands
    "Address", "Imm", "Label", "Operand", "ParamList", "Reg", "RegPair", "Sink", "SpecialReg",
    "Symbol", "TexOperand", "Vector",
    # classes and analyses
    "BasicBlock", "CFG", "Divergence", "DomTree", "FunctionSummary", "InstrClass", "Liveness",
    "Loop", "LoopSummary", "build_cfg", "divergence", "dom_tree", "dominators", "instruction_class",
    "liveness", "loops",
    "post_dominators", "read_registers", "reconvergence_points", "static_mix", "summarize",
    "summarize_module", "written_registers",
]
