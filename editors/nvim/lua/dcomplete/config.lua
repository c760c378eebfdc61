--- Options of require('dcomplete').setup(), their defaults and their validation.
local M = {}

--- Every language the server has a grammar for, under the filetype names Neovim uses (`dcomplete serve`
--- announces the same list in its initialize result; tests/editors/test_nvim_units.py keeps them equal).
M.LANGUAGES = {
  'python', 'javascript', 'javascriptreact', 'typescript', 'tsx', 'typescriptreact', 'java', 'go', 'rust', 'c', 'cpp', 'csharp', 'cs', 'ruby', 'php', 'bash', 'sh', 'shellscript', 'lua', 'json', 'jsonc', 'yaml', 'toml',
}

---@class dcomplete.Keymaps
---@field accept string|false
---@field accept_word string|false
---@field accept_line string|false
---@field dismiss string|false
---@field next string|false
---@field prev string|false

---@class dcomplete.NextEditKeymaps
---@field jump_or_apply string|false
---@field dismiss string|false

---@class dcomplete.NextEditOptions
---@field enabled boolean Ask the server for next edits after edits outside insert mode.
---@field debounce_ms integer Quiet time after an edit burst before asking.
---@field keymaps dcomplete.NextEditKeymaps Normal-mode keys; false disables one.

---@class dcomplete.Config
---@field cmd string[] Command that starts the server over stdio.
---@field filetypes string[] Filetypes the server is started for.
---@field renderer "auto"|"builtin"|"extmark"
---@field settings table Server settings, sent under the `dcomplete` key.
---@field root_markers string[] Files that mark a project root (the server's root_dir).
---@field debounce_ms integer Client-side wait of the extmark renderer before it asks for a completion.
---@field keymaps dcomplete.Keymaps Insert-mode keys; false disables one.
---@field next_edit dcomplete.NextEditOptions

---@return dcomplete.Config
function M.defaults()
  return {
    cmd = { 'dcomplete', 'serve' },
    filetypes = vim.deepcopy(M.LANGUAGES),
    renderer = 'auto',
    settings = {},
    root_markers = { 'pyproject.toml', 'setup.py', 'setup.cfg', 'package.json', 'go.mod', 'Cargo.toml', '.git' },
    debounce_ms = 75,
    keymaps = {
      accept = '<Tab>',
      accept_word = '<M-w>',
      accept_line = '<M-l>',
      dismiss = '<C-]>',
      next = '<M-]>',
      prev = '<M-[>',
    },
    next_edit = {
      enabled = true,
      debounce_ms = 300,
      keymaps = { jump_or_apply = '<Tab>', dismiss = '<Esc>' },
    },
  }
end

local RENDERERS = { auto = true, builtin = true, extmark = true }

local function is_string_list(value)
  if type(value) ~= 'table' or #value == 0 then
    return false
  end
  for _, item in ipairs(value) do
    if type(item) ~= 'string' or item == '' then
      return false
    end
  end
  return true
end

local function check(ok, message)
  if not ok then
    error('dcomplete.setup: ' .. message, 0)
  end
end

local function check_keymaps(keymaps, known, field, what)
  check(type(keymaps) == 'table', ('`%s` must be a table of keys'):format(field))
  for name, lhs in pairs(keymaps) do
    check(known[name] ~= nil, ('unknown %s `%s`'):format(what, tostring(name)))
    check(lhs == false or (type(lhs) == 'string' and lhs ~= ''), ('%s `%s` must be a key or false'):format(what, name))
  end
end

local function check_next_edit(options, known)
  check(type(options) == 'table', '`next_edit` must be a table')
  for key in pairs(options) do
    check(known[key] ~= nil, ('unknown option `next_edit.%s`'):format(tostring(key)))
  end
  check(type(options.enabled) == 'boolean', '`next_edit.enabled` must be true or false')
  check(
    type(options.debounce_ms) == 'number' and options.debounce_ms >= 0,
    '`next_edit.debounce_ms` must be a number >= 0'
  )
  check_keymaps(options.keymaps, known.keymaps, 'next_edit.keymaps', 'next_edit keymap')
end

--- Merges user options over the defaults; a bad option raises one error naming it.
---@param opts table|nil
---@return dcomplete.Config
function M.resolve(opts)
  check(opts == nil or type(opts) == 'table', 'options must be a table, got ' .. type(opts))
  opts = opts or {}
  local known = M.defaults()
  for key in pairs(opts) do
    check(known[key] ~= nil, ('unknown option `%s`'):format(tostring(key)))
  end
  local config = vim.tbl_deep_extend('force', known, opts)
  if opts.cmd then
    config.cmd = opts.cmd
  end
  if opts.filetypes then
    config.filetypes = opts.filetypes
  end
  check(is_string_list(config.cmd), '`cmd` must be a non-empty list of strings, e.g. {"dcomplete", "serve"}')
  check(is_string_list(config.filetypes), '`filetypes` must be a non-empty list of filetype names')
  check(
    RENDERERS[config.renderer] == true,
    ('`renderer` must be "auto", "builtin" or "extmark", got %s'):format(vim.inspect(config.renderer))
  )
  check(type(config.settings) == 'table', '`settings` must be a table of server settings')
  check(
    type(config.debounce_ms) == 'number' and config.debounce_ms >= 0,
    '`debounce_ms` must be a number >= 0'
  )
  check_keymaps(config.keymaps, known.keymaps, 'keymaps', 'keymap')
  check_next_edit(config.next_edit, known.next_edit)
  return config
end

--- Whether this Neovim has the built-in inline completion client (0.12+).
function M.has_builtin()
  local ok, module = pcall(require, 'vim.lsp.inline_completion')
  return ok and type(module) == 'table' and type(module.enable) == 'function'
end

---@param config dcomplete.Config
---@return "builtin"|"extmark"
function M.pick_renderer(config)
  if config.renderer == 'builtin' then
    check(M.has_builtin(), 'renderer "builtin" needs Neovim 0.12+ (vim.lsp.inline_completion); use "extmark"')
    return 'builtin'
  end
  if config.renderer == 'extmark' then
    return 'extmark'
  end
  return M.has_builtin() and 'builtin' or 'extmark'
end

return M
