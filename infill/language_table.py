"""The language table: one `LanguageSpec` row per language (fields documented in infill.language_spec).

Grammars are the tree-sitter project's own wheels (`tree-sitter-<lang>` on PyPI, MIT), one per
language, compiled into the wheel: nothing is fetched at run time. Node type names come from each
grammar's node-types.json (its `statement` supertype where it has one).
"""

from __future__ import annotations

from infill import scope_rules
from infill.language_spec import LanguageSpec

_f = frozenset

_PYTHON_COMPOUND = _f({
    "function_definition", "class_definition", "if_statement", "elif_clause", "else_clause", "for_statement",
    "while_statement", "with_statement", "try_statement", "except_clause", "finally_clause", "match_statement",
    "case_clause", "decorated_definition",
})

_JS_STATEMENTS = _f({
    "break_statement", "continue_statement", "debugger_statement", "do_statement", "empty_statement",
    "export_statement", "expression_statement", "for_in_statement", "for_statement", "if_statement",
    "import_statement", "labeled_statement", "return_statement", "statement_block", "switch_statement",
    "throw_statement", "try_statement", "while_statement", "with_statement", "class_declaration",
    "function_declaration", "generator_function_declaration", "lexical_declaration", "variable_declaration",
    "method_definition",
})
_TS_STATEMENTS = _JS_STATEMENTS | _f({
    "abstract_class_declaration", "ambient_declaration", "enum_declaration", "interface_declaration",
    "type_alias_declaration", "public_field_definition",
})
_JS_STRINGS = _f({"string", "string_fragment", "template_string"})
_JS_CONTAINERS = _f({"program", "statement_block", "class_body", "switch_body"})
_JS_FUNCTIONS = (
    "(function_declaration name: (identifier) @name body: (statement_block) @body)",
    "(method_definition name: (property_identifier) @name body: (statement_block) @body)",
    "(variable_declarator name: (identifier) @name value: (arrow_function body: (statement_block) @body))",
)
_JS_KEYWORDS = _f({"function", "class", "=>"})

_C_STATEMENTS = _f({
    "attributed_statement", "break_statement", "case_statement", "compound_statement", "continue_statement",
    "do_statement", "expression_statement", "for_statement", "goto_statement", "if_statement",
    "labeled_statement", "return_statement", "switch_statement", "while_statement", "declaration",
    "function_definition", "type_definition", "field_declaration",
})
_C_STRINGS = _f({"string_literal", "string_content", "char_literal", "concatenated_string", "system_lib_string"})
_C_CONTAINERS = _f({"translation_unit", "compound_statement", "field_declaration_list"})
_C_LIKE_LINES = ("if (true) {", "} else {", "}")  # lines that open, continue and close a block
_GO_LIKE_LINES = ("if true {", "} else {", "}")
_C_FUNCTIONS = (
    "(function_definition declarator: (function_declarator declarator: (_) @name) body: (compound_statement) @body)",
)

ROWS: tuple[LanguageSpec, ...] = (
    LanguageSpec(
        id="python", grammar_module="tree_sitter_python", extensions=(".py", ".pyi", ".pyw"), comment_prefix="#",
        block_header_end=_f({":"}), function_keywords=_f({"def", "class"}),
        statements=_PYTHON_COMPOUND | _f({
            "expression_statement", "return_statement", "pass_statement", "break_statement",
            "continue_statement", "raise_statement", "import_statement", "import_from_statement",
            "assert_statement", "global_statement", "nonlocal_statement", "delete_statement",
            "type_alias_statement",
        }),
        strings=_f({"string", "string_content", "concatenated_string"}),
        containers=_f({"module", "block"}),
        function_patterns=("(function_definition name: (identifier) @name body: (block) @body)",),
        real_parser="ast", empty_statement="pass",
        stand_in_lines=("if True:", "try:", "_ = (", "_ = [", "_ = {"),
        header_keywords=_f({"if", "elif", "else", "for", "while", "def", "class", "with", "try", "except",
                            "finally", "async", "match", "case"}),
        scoping=scope_rules.PYTHON,
    ),
    LanguageSpec(
        id="javascript", grammar_module="tree_sitter_javascript", extensions=(".js", ".mjs", ".cjs", ".jsx"),
        comment_prefix="//", language_ids=("javascriptreact",), function_keywords=_JS_KEYWORDS,
        empty_statement=";", stand_in_lines=_C_LIKE_LINES,
        statements=_JS_STATEMENTS, strings=_JS_STRINGS, comments=_f({"comment", "html_comment"}),
        containers=_JS_CONTAINERS, function_patterns=_JS_FUNCTIONS, scoping=scope_rules.JAVASCRIPT,
    ),
    LanguageSpec(
        id="typescript", grammar_module="tree_sitter_typescript", grammar_function="language_typescript",
        extensions=(".ts", ".mts", ".cts"), comment_prefix="//", function_keywords=_JS_KEYWORDS,
        empty_statement=";", stand_in_lines=_C_LIKE_LINES,
        statements=_TS_STATEMENTS, strings=_JS_STRINGS, containers=_JS_CONTAINERS | _f({"interface_body"}),
        function_patterns=_JS_FUNCTIONS, scoping=scope_rules.TYPESCRIPT,
    ),
    LanguageSpec(
        id="tsx", grammar_module="tree_sitter_typescript", grammar_function="language_tsx", extensions=(".tsx",),
        comment_prefix="//", language_ids=("typescriptreact",), function_keywords=_JS_KEYWORDS,
        empty_statement=";", stand_in_lines=_C_LIKE_LINES,
        statements=_TS_STATEMENTS, strings=_JS_STRINGS, containers=_JS_CONTAINERS | _f({"interface_body"}),
        function_patterns=_JS_FUNCTIONS, scoping=scope_rules.TYPESCRIPT,
    ),
    LanguageSpec(
        id="java", grammar_module="tree_sitter_java", extensions=(".java",), comment_prefix="//",
        empty_statement=";", stand_in_lines=_C_LIKE_LINES,
        function_keywords=_f({"class", "interface", "enum", "record"}),
        statements=_f({
            "assert_statement", "break_statement", "continue_statement", "do_statement",
            "enhanced_for_statement", "expression_statement", "for_statement", "if_statement",
            "labeled_statement", "return_statement", "switch_expression", "synchronized_statement",
            "throw_statement", "try_statement", "try_with_resources_statement", "while_statement",
            "yield_statement", "local_variable_declaration", "field_declaration", "method_declaration",
            "constructor_declaration", "class_declaration", "interface_declaration", "enum_declaration",
            "record_declaration", "import_declaration", "package_declaration", "block",
        }),
        strings=_f({"string_literal", "string_fragment", "multiline_string_fragment", "character_literal"}),
        comments=_f({"line_comment", "block_comment"}),
        containers=_f({"program", "block", "class_body", "interface_body", "constructor_body", "enum_body"}),
        function_patterns=(
            "(method_declaration name: (identifier) @name body: (block) @body)",
            "(constructor_declaration name: (identifier) @name body: (constructor_body) @body)",
        ),
        scoping=scope_rules.JAVA,
    ),
    LanguageSpec(
        id="go", grammar_module="tree_sitter_go", extensions=(".go",), comment_prefix="//",
        empty_statement=";", stand_in_lines=_GO_LIKE_LINES,
        function_keywords=_f({"func", "struct", "interface"}),
        statements=_f({
            "assignment_statement", "dec_statement", "expression_statement", "inc_statement", "send_statement",
            "short_var_declaration", "block", "break_statement", "const_declaration", "continue_statement",
            "defer_statement", "empty_statement", "expression_switch_statement", "fallthrough_statement",
            "for_statement", "go_statement", "goto_statement", "if_statement", "labeled_statement",
            "return_statement", "select_statement", "type_declaration", "type_switch_statement",
            "var_declaration", "function_declaration", "method_declaration", "import_declaration",
            "package_clause",
        }),
        strings=_f({
            "interpreted_string_literal", "interpreted_string_literal_content", "raw_string_literal",
            "raw_string_literal_content", "rune_literal",
        }),
        containers=_f({"source_file", "block", "statement_list"}),
        function_patterns=(
            "(function_declaration name: (identifier) @name body: (block) @body)",
            "(method_declaration name: (field_identifier) @name body: (block) @body)",
        ),
        scoping=scope_rules.GO,
    ),
    LanguageSpec(
        id="rust", grammar_module="tree_sitter_rust", extensions=(".rs",), comment_prefix="//",
        empty_statement=";", stand_in_lines=_GO_LIKE_LINES,
        function_keywords=_f({"fn", "struct", "enum", "impl", "trait", "mod"}),
        statements=_f({
            "expression_statement", "let_declaration", "empty_statement", "function_item", "struct_item",
            "enum_item", "impl_item", "trait_item", "mod_item", "use_declaration", "const_item", "static_item",
            "type_item", "macro_invocation", "extern_crate_declaration", "macro_definition",
        }),
        strings=_f({"string_literal", "raw_string_literal", "string_content", "char_literal"}),
        comments=_f({"line_comment", "block_comment"}),
        containers=_f({"source_file", "block", "declaration_list"}),
        function_patterns=("(function_item name: (identifier) @name body: (block) @body)",),
        scoping=scope_rules.RUST,
    ),
    LanguageSpec(
        id="c", grammar_module="tree_sitter_c", extensions=(".c", ".h"), comment_prefix="//",
        empty_statement=";", stand_in_lines=_C_LIKE_LINES,
        function_keywords=_f({"struct", "union", "enum"}), statements=_C_STATEMENTS, strings=_C_STRINGS,
        containers=_C_CONTAINERS, function_patterns=_C_FUNCTIONS,
        scoping=scope_rules.C,
    ),
    LanguageSpec(
        id="cpp", grammar_module="tree_sitter_cpp", extensions=(".cpp", ".cc", ".cxx", ".hpp", ".hh", ".hxx"),
        comment_prefix="//", function_keywords=_f({"class", "struct", "namespace"}),
        empty_statement=";", stand_in_lines=_C_LIKE_LINES,
        statements=_C_STATEMENTS | _f({
            "throw_statement", "try_statement", "co_return_statement", "co_yield_statement",
            "for_range_loop", "alias_declaration", "using_declaration", "namespace_definition",
            "template_declaration", "class_specifier", "struct_specifier",
        }),
        strings=_C_STRINGS | _f({"raw_string_literal", "raw_string_content"}),
        containers=_C_CONTAINERS | _f({"declaration_list"}), function_patterns=_C_FUNCTIONS,
        scoping=scope_rules.CPP,
    ),
    LanguageSpec(
        id="csharp", grammar_module="tree_sitter_c_sharp", extensions=(".cs",), comment_prefix="//",
        empty_statement=";", stand_in_lines=_C_LIKE_LINES,
        language_ids=("cs",), function_keywords=_f({"class", "struct", "interface", "record"}),
        statements=_f({
            "block", "break_statement", "checked_statement", "continue_statement", "do_statement",
            "empty_statement", "expression_statement", "fixed_statement", "for_statement",
            "foreach_statement", "goto_statement", "if_statement", "labeled_statement",
            "local_declaration_statement", "local_function_statement", "lock_statement", "return_statement",
            "switch_statement", "throw_statement", "try_statement", "unsafe_statement", "using_statement",
            "while_statement", "yield_statement", "field_declaration", "method_declaration",
            "property_declaration", "class_declaration", "using_directive", "global_statement",
        }),
        strings=_f({
            "string_literal", "string_literal_content", "verbatim_string_literal", "raw_string_literal",
            "raw_string_content", "interpolated_string_expression", "character_literal",
        }),
        containers=_f({"compilation_unit", "block", "declaration_list"}),
        function_patterns=(
            "(method_declaration name: (identifier) @name body: (block) @body)",
            "(constructor_declaration name: (identifier) @name body: (block) @body)",
            "(local_function_statement name: (identifier) @name body: (block) @body)",
        ),
        scoping=scope_rules.CSHARP,
    ),
    LanguageSpec(
        id="ruby", grammar_module="tree_sitter_ruby", extensions=(".rb", ".rake", ".gemspec"), comment_prefix="#",
        block_header_end=_f({"do", "then", "|"}),
        block_header_start=_f({"def", "class", "module", "if", "unless", "while", "until", "for", "case",
                                 "begin", "else", "elsif", "when", "rescue", "ensure"}),
        block_closers=_f({"end"}), function_keywords=_f({"def", "class", "module"}),
        statements=_f({
            "assignment", "operator_assignment", "call", "method", "class", "module", "if", "unless", "while",
            "until", "for", "case", "return", "if_modifier", "unless_modifier", "while_modifier",
            "until_modifier", "rescue_modifier", "begin", "yield", "break", "next", "binary",
        }),
        strings=_f({"string", "string_content", "heredoc_body", "heredoc_content", "bare_string",
                    "chained_string"}),
        containers=_f({"program", "body_statement", "block_body", "then", "else", "do"}),
        function_patterns=("(method name: (_) @name body: (body_statement) @body)",),
        scoping=scope_rules.RUBY,
    ),
    LanguageSpec(
        id="php", grammar_module="tree_sitter_php", grammar_function="language_php", extensions=(".php",),
        comment_prefix="//", function_keywords=_f({"function", "class", "interface", "trait", "fn"}),
        empty_statement=";", stand_in_lines=_C_LIKE_LINES,
        statements=_f({
            "break_statement", "class_declaration", "compound_statement", "const_declaration",
            "continue_statement", "declare_statement", "do_statement", "echo_statement", "empty_statement",
            "enum_declaration", "exit_statement", "expression_statement", "for_statement", "foreach_statement",
            "function_definition", "function_static_declaration", "global_declaration", "goto_statement",
            "if_statement", "interface_declaration", "named_label_statement", "namespace_definition",
            "namespace_use_declaration", "return_statement", "switch_statement", "trait_declaration",
            "try_statement", "unset_statement", "while_statement", "method_declaration",
            "property_declaration",
        }),
        strings=_f({"string", "encapsed_string", "string_content", "heredoc", "heredoc_body", "nowdoc",
                    "nowdoc_body"}),
        containers=_f({"program", "compound_statement", "declaration_list"}),
        function_patterns=(
            "(function_definition name: (name) @name body: (compound_statement) @body)",
            "(method_declaration name: (name) @name body: (compound_statement) @body)",
        ),
        scoping=scope_rules.PHP,
    ),
    LanguageSpec(
        id="bash", grammar_module="tree_sitter_bash", extensions=(".sh", ".bash"), comment_prefix="#",
        language_ids=("sh", "shellscript"), block_header_end=_f({"{", "then", "do", "else", "in"}),
        block_closers=_f({"fi", "done", "esac", "}"}), function_keywords=_f({"function", "(", ")"}),
        statements=_f({
            "command", "variable_assignment", "declaration_command", "if_statement", "for_statement",
            "c_style_for_statement", "while_statement", "case_statement", "function_definition",
            "pipeline", "list", "redirected_statement", "compound_statement", "subshell", "test_command",
            "unset_command", "negated_command",
        }),
        strings=_f({"string", "raw_string", "ansi_c_string", "string_content", "heredoc_body",
                    "heredoc_content", "translated_string"}),
        containers=_f({"program", "compound_statement", "do_group"}),
        function_patterns=("(function_definition name: (word) @name body: (compound_statement) @body)",),
        empty_statement=":",
        scoping=scope_rules.BASH,
    ),
    LanguageSpec(
        id="lua", grammar_module="tree_sitter_lua", extensions=(".lua",), comment_prefix="--",
        block_header_end=_f({"then", "do", "else", "repeat"}), block_header_start=_f({"function"}),
        block_closers=_f({"end", "until"}), function_keywords=_f({"function"}),
        statements=_f({
            "assignment_statement", "break_statement", "do_statement", "empty_statement", "for_statement",
            "function_call", "goto_statement", "if_statement", "label_statement", "repeat_statement",
            "while_statement", "function_declaration", "variable_declaration", "return_statement",
        }),
        strings=_f({"string", "string_content"}), containers=_f({"chunk", "block"}),
        function_patterns=("(function_declaration name: (_) @name body: (block) @body)",),
        scoping=scope_rules.LUA,
    ),
    # Data files: single-line completions with a parse check (no blocks, no statements).
    LanguageSpec(
        id="json", grammar_module="tree_sitter_json", extensions=(".json",), comment_prefix="//",
        language_ids=("jsonc",), strings=_f({"string", "string_content"}), line_only=True,
    ),
    LanguageSpec(
        id="yaml", grammar_module="tree_sitter_yaml", extensions=(".yaml", ".yml"), comment_prefix="#",
        strings=_f({"string_scalar", "double_quote_scalar", "single_quote_scalar", "block_scalar"}),
        line_only=True,
    ),
    LanguageSpec(
        id="toml", grammar_module="tree_sitter_toml", extensions=(".toml",), comment_prefix="#",
        strings=_f({"string"}), line_only=True,
    ),
)
