"""How each language binds names (`languages.Scoping`), for the rows of `infill.language_table`.

Each is a tree-sitter query over the grammar's own node types (its node-types.json) and the node types of
its scopes; captures are documented on `Scoping`. They cover the common ways a statement binds a name;
what they miss is never required of a fill (a read that resolves to nothing is not judged), so a gap here
costs a missed refusal, not a wrong one.
"""

from __future__ import annotations

from infill.language_spec import Scoping

_f = frozenset

PYTHON = Scoping(
    bindings="""
    (assignment left: (identifier) @name) @binding
    (assignment left: [(pattern_list) (tuple_pattern) (list_pattern)] @pattern) @binding
    (for_statement left: (_) @pattern)
    (for_in_clause left: (_) @pattern)
    (as_pattern alias: (as_pattern_target) @pattern)
    (named_expression name: (identifier) @name) @binding
    (function_definition name: (identifier) @outer) @binding
    (class_definition name: (identifier) @outer) @binding
    (parameters (identifier) @name)
    (lambda_parameters (identifier) @name)
    (default_parameter name: (identifier) @name)
    (typed_default_parameter name: (identifier) @name)
    (typed_parameter . (identifier) @name)
    (list_splat_pattern (identifier) @name)
    (dictionary_splat_pattern (identifier) @name)
    (import_statement name: (dotted_name . (identifier) @name))
    (aliased_import alias: (identifier) @name)
    (import_from_statement name: (dotted_name (identifier) @name))
    (dotted_name (identifier) @skip)
    (attribute attribute: (identifier) @skip)
    (keyword_argument name: (identifier) @skip)
    (global_statement (identifier) @skip)
    (nonlocal_statement (identifier) @skip)
    """,
    names=_f({"identifier"}),
    patterns=_f({"pattern_list", "tuple_pattern", "list_pattern", "list_splat_pattern", "as_pattern_target",
                 "tuple", "list", "parenthesized_expression"}),
    functions=_f({"function_definition", "lambda", "class_definition", "list_comprehension", "set_comprehension",
                  "dictionary_comprehension", "generator_expression"}),
)
"""Python binds in functions, classes and comprehensions only. A `dotted_name` is an import's module path
(its first name bound by `import a.b`) or a match pattern's value: no read either way."""

_JS_BINDINGS = """
    (lexical_declaration (variable_declarator name: (identifier) @name) @binding)
    (lexical_declaration (variable_declarator name: [(object_pattern) (array_pattern)] @pattern) @binding)
    (variable_declaration (variable_declarator name: (identifier) @hoisted) @binding)
    (variable_declaration (variable_declarator name: [(object_pattern) (array_pattern)] @hoisted_pattern) @binding)
    (function_declaration name: (identifier) @outer) @binding
    (generator_function_declaration name: (identifier) @outer) @binding
    (class_declaration name: (_) @name) @binding
    (formal_parameters (_) @pattern)
    (arrow_function parameter: (identifier) @name)
    (for_in_statement kind: _ left: (_) @pattern)
    (catch_clause parameter: (_) @pattern)
    (import_clause (identifier) @name)
    (namespace_import (identifier) @name)
    (import_specifier alias: (identifier) @name)
    (import_specifier name: (identifier) @name !alias)
    (import_specifier name: (identifier) @skip alias: (identifier))
    (export_specifier alias: (identifier) @skip)
"""
_JS_NAMES = _f({"identifier", "shorthand_property_identifier", "shorthand_property_identifier_pattern"})
_JS_PATTERNS = _f({"object_pattern", "array_pattern", "pair_pattern", "rest_pattern",
                   "assignment_pattern", "object_assignment_pattern"})
_JS_FUNCTIONS = _f({"function_declaration", "generator_function_declaration", "function_expression",
                    "generator_function", "arrow_function", "method_definition"})
_JS_BLOCKS = _f({"statement_block", "for_statement", "for_in_statement", "catch_clause", "switch_body",
                 "class_body"})

JAVASCRIPT = Scoping(bindings=_JS_BINDINGS, names=_JS_NAMES, patterns=_JS_PATTERNS, functions=_JS_FUNCTIONS,
                     blocks=_JS_BLOCKS)
"""`let`, `const`, classes and functions bind in their block, `var` in its function; a plain assignment
binds nothing (it changes a binding made elsewhere)."""

TYPESCRIPT = Scoping(
    bindings=_JS_BINDINGS + """
    (required_parameter pattern: (_) @pattern)
    (optional_parameter pattern: (_) @pattern)
    (enum_declaration name: (identifier) @name) @binding
    """,
    names=_JS_NAMES, patterns=_JS_PATTERNS, functions=_JS_FUNCTIONS, blocks=_JS_BLOCKS,
)

JAVA = Scoping(
    bindings="""
    (variable_declarator name: (identifier) @name) @binding
    (formal_parameter name: (identifier) @name)
    (catch_formal_parameter name: (identifier) @name)
    (resource name: (identifier) @name) @binding
    (enhanced_for_statement name: (identifier) @name)
    (inferred_parameters (identifier) @name)
    (lambda_expression parameters: (identifier) @name)
    (instanceof_expression name: (identifier) @name)
    (import_declaration (scoped_identifier name: (identifier) @name))
    (scoped_identifier (identifier) @skip)
    (field_access field: (identifier) @skip)
    (method_invocation name: (identifier) @skip)
    (method_declaration name: (identifier) @skip)
    (constructor_declaration name: (identifier) @skip)
    (class_declaration name: (identifier) @skip)
    """,
    names=_f({"identifier"}),
    functions=_f({"method_declaration", "constructor_declaration", "lambda_expression"}),
    blocks=_f({"block", "constructor_body", "class_body", "for_statement", "enhanced_for_statement",
               "try_with_resources_statement", "catch_clause", "switch_block_statement_group", "switch_rule"}),
)
"""Locals, parameters and fields; methods and classes live in other namespaces (a method's name is never a
variable's read)."""

GO = Scoping(
    bindings="""
    (short_var_declaration left: (expression_list (identifier) @name)) @binding
    (var_spec name: (identifier) @name) @binding
    (const_spec name: (identifier) @name) @binding
    (parameter_declaration name: (identifier) @name)
    (variadic_parameter_declaration name: (identifier) @name)
    (range_clause left: (expression_list (identifier) @name))
    (type_switch_statement alias: (expression_list (identifier) @name))
    (function_declaration name: (identifier) @outer) @binding
    (import_spec name: (package_identifier) @name)
    (keyed_element key: (literal_element (identifier) @skip))
    """,
    names=_f({"identifier"}),
    functions=_f({"function_declaration", "method_declaration", "func_literal"}),
    blocks=_f({"block", "for_statement", "if_statement", "expression_switch_statement", "type_switch_statement",
               "select_statement", "expression_case", "type_case", "default_case", "communication_case"}),
)
"""A composite literal's keys are field names (a map literal's key may be a read: missed, not refused)."""

RUST = Scoping(
    bindings="""
    (let_declaration pattern: (_) @pattern) @binding
    (parameter pattern: (_) @pattern)
    (closure_parameters (identifier) @name)
    (for_expression pattern: (_) @pattern)
    (let_condition pattern: (_) @pattern)
    (match_arm pattern: (match_pattern) @pattern)
    (function_item name: (identifier) @outer) @binding
    (const_item name: (identifier) @name) @binding
    (static_item name: (identifier) @name) @binding
    (use_as_clause alias: (identifier) @name)
    (use_declaration argument: (identifier) @name)
    (use_declaration argument: (scoped_identifier name: (identifier) @name))
    (use_list (identifier) @name)
    (use_list (scoped_identifier name: (identifier) @name))
    (scoped_identifier (identifier) @skip)
    (use_as_clause path: (identifier) @skip)
    """,
    names=_f({"identifier", "shorthand_field_identifier"}),
    patterns=_f({"tuple_pattern", "struct_pattern", "field_pattern", "tuple_struct_pattern", "mut_pattern",
                 "ref_pattern", "reference_pattern", "slice_pattern", "or_pattern", "captured_pattern",
                 "match_pattern"}),
    unwalked=_f({"type", "condition"}),
    functions=_f({"function_item", "closure_expression"}),
    blocks=_f({"block", "for_expression", "if_expression", "while_expression", "match_arm"}),
)
"""`let` shadows (a `let x = x + 1` reads the old `x`); items are order-independent (declared names: a read
before one is never judged)."""

_C_BINDINGS = """
    (declaration declarator: (_) @pattern) @binding
    (parameter_declaration declarator: (_) @pattern)
    (function_definition declarator: (function_declarator declarator: (identifier) @outer)) @binding
    (function_definition declarator: (pointer_declarator declarator: (function_declarator
        declarator: (identifier) @outer))) @binding
    (preproc_def name: (identifier) @name)
    (enumerator name: (identifier) @name)
"""
_C_PATTERNS = _f({"init_declarator", "pointer_declarator", "array_declarator", "parenthesized_declarator",
                  "function_declarator", "attributed_declarator"})
_C_UNWALKED = _f({"value", "size", "parameters"})

C = Scoping(bindings=_C_BINDINGS, names=_f({"identifier"}), patterns=_C_PATTERNS, unwalked=_C_UNWALKED,
            functions=_f({"function_definition"}), blocks=_f({"compound_statement", "for_statement"}))

CPP = Scoping(
    bindings=_C_BINDINGS + """
    (function_definition declarator: (reference_declarator (function_declarator
        declarator: (identifier) @outer))) @binding
    (for_range_loop declarator: (_) @pattern)
    (qualified_identifier name: (identifier) @skip)
    """,
    names=_f({"identifier"}),
    patterns=_C_PATTERNS | _f({"reference_declarator", "structured_binding_declarator"}),
    unwalked=_C_UNWALKED,
    functions=_f({"function_definition", "lambda_expression"}),
    blocks=_f({"compound_statement", "for_statement", "for_range_loop", "catch_clause"}),
)

CSHARP = Scoping(
    bindings="""
    (variable_declarator name: (identifier) @name) @binding
    (variable_declarator (tuple_pattern name: (identifier) @name)) @binding
    (parameter name: (identifier) @name)
    (implicit_parameter) @name
    (foreach_statement left: (identifier) @name)
    (catch_declaration name: (identifier) @name)
    (declaration_pattern name: (identifier) @name)
    (local_function_statement name: (identifier) @outer) @binding
    (using_directive name: (identifier) @name)
    (member_access_expression name: (identifier) @skip)
    (qualified_name (identifier) @skip)
    (argument name: (identifier) @skip)
    (method_declaration name: (identifier) @skip)
    (class_declaration name: (identifier) @skip)
    """,
    names=_f({"identifier", "implicit_parameter"}),
    functions=_f({"method_declaration", "constructor_declaration", "local_function_statement",
                  "lambda_expression", "anonymous_method_expression", "accessor_declaration"}),
    blocks=_f({"block", "declaration_list", "for_statement", "foreach_statement", "using_statement",
               "catch_clause", "switch_section"}),
)

RUBY = Scoping(
    bindings="""
    (assignment left: (identifier) @name) @binding
    (assignment left: (left_assignment_list) @pattern) @binding
    (operator_assignment left: (identifier) @name) @binding
    (method_parameters (identifier) @name)
    (lambda_parameters (identifier) @name)
    (block_parameters (_) @pattern)
    (optional_parameter name: (identifier) @name)
    (splat_parameter name: (identifier) @name)
    (hash_splat_parameter name: (identifier) @name)
    (keyword_parameter name: (identifier) @name)
    (block_parameter name: (identifier) @name)
    (for pattern: (_) @pattern)
    (exception_variable (identifier) @name)
    (method name: (identifier) @skip)
    (call method: (identifier) @skip)
    """,
    names=_f({"identifier"}),
    patterns=_f({"left_assignment_list", "destructured_left_assignment", "rest_assignment",
                 "destructured_parameter"}),
    functions=_f({"method", "singleton_method", "class", "module", "block", "do_block", "lambda"}),
    closed=_f({"method", "singleton_method", "class", "module"}),
)
"""Local variables only: a `def` (and a class body) starts afresh, a block sees the locals around it."""

PHP = Scoping(
    bindings="""
    (assignment_expression left: (variable_name) @name) @binding
    (assignment_expression left: (list_literal) @pattern) @binding
    (simple_parameter name: (variable_name) @name)
    (variadic_parameter name: (variable_name) @name)
    (foreach_statement (pair (variable_name) @name))
    (foreach_statement (_) . (variable_name) @name)
    (catch_clause name: (variable_name) @name)
    (static_variable_declaration name: (variable_name) @name)
    (global_declaration (variable_name) @name)
    (scoped_property_access_expression name: (variable_name) @skip)
    """,
    names=_f({"variable_name"}),
    patterns=_f({"list_literal", "pair"}),
    functions=_f({"function_definition", "method_declaration", "anonymous_function", "arrow_function"}),
    closed=_f({"function_definition", "method_declaration", "anonymous_function"}),
)
"""Variables only (functions, classes and constants are global and order-independent); a function sees no
variable around it (a closure's `use` list is missed, not refused), an arrow function sees them all."""

BASH = Scoping(
    bindings="""
    (variable_assignment name: (variable_name) @name) @binding
    (for_statement variable: (variable_name) @name)
    """,
    names=_f({"variable_name"}),
)
"""Every variable binds for the whole script in text order (`local` is dynamic scope, not modelled); a
name set by a command (`read line`) is not seen, so reads of it are never required."""

LUA = Scoping(
    bindings="""
    (variable_declaration (assignment_statement (variable_list name: (identifier) @name)) @binding)
    (variable_declaration (variable_list name: (identifier) @name))
    (chunk (assignment_statement (variable_list name: (identifier) @name)) @binding)
    (function_declaration name: (identifier) @outer) @binding
    (parameters name: (identifier) @name)
    (for_numeric_clause name: (identifier) @name)
    (for_generic_clause (variable_list name: (identifier) @name))
    (dot_index_expression field: (identifier) @skip)
    (method_index_expression method: (identifier) @skip)
    (field name: (identifier) @skip)
    (attribute (identifier) @skip)
    """,
    names=_f({"identifier"}),
    functions=_f({"function_declaration", "function_definition"}),
    blocks=_f({"block", "for_statement"}),
)
"""`local` names and the file's own globals (assigned at its top level); a global assigned inside a
function is not modelled."""
