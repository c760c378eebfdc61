-- Pure-Lua parts of the plugin, run by test_nvim_units.py with `nvim --headless --clean -l`.
local plugin = assert(arg[1], 'usage: nvim -l nvim_units.lua <plugin dir>')
vim.opt.rtp:prepend(plugin)

local failures = 0
local function case(name, fn)
  local ok, err = pcall(fn)
  if ok then
    io.stdout:write('ok ' .. name .. '\n')
  else
    failures = failures + 1
    io.stdout:write('FAIL ' .. name .. ': ' .. tostring(err) .. '\n')
  end
end
local function eq(got, want)
  if not vim.deep_equal(got, want) then
    error(('got %s, want %s'):format(vim.inspect(got), vim.inspect(want)), 2)
  end
end
local function raises(fn, pattern)
  local ok, err = pcall(fn)
  if ok then
    error('expected an error matching ' .. pattern, 2)
  end
  if not tostring(err):find(pattern, 1, true) then
    error(('error %q does not mention %q'):format(tostring(err), pattern), 2)
  end
end

local text = require('dcomplete.text')
local config = require('dcomplete.config')

case('next_word takes leading blanks and one word', function()
  eq(text.next_word('  foo(bar)'), '  foo')
  eq(text.next_word('(bar)'), '(')
  eq(text.next_word('.append(x)'), '.')
  eq(text.next_word('\n    return x'), '\n    ')
  eq(text.next_word('x'), 'x')
end)

case('next_line stops at the line break, or takes the next line', function()
  eq(text.next_line('a = 1\nb = 2'), 'a = 1')
  eq(text.next_line('\n    b = 2\nc'), '\n    b = 2')
  eq(text.next_line('tail'), 'tail')
end)

case('byte_col and lsp_character convert UTF-16 both ways', function()
  local line = 'é = "ü" + x'
  eq(text.byte_col(line, 1, 'utf-16'), 2)
  eq(text.byte_col(line, 6, 'utf-16'), 8)
  eq(text.lsp_character(line, 8, 'utf-16'), 6)
  eq(text.byte_col(line, 3, 'utf-8'), 3)
  eq(text.byte_col(line, 99, 'utf-16'), #line)
end)

case('insert returns the cursor after the text', function()
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, { 'ab' })
  eq({ text.insert(buf, 0, 1, 'X\nYZ') }, { 2, 2 })
  eq(vim.api.nvim_buf_get_lines(buf, 0, -1, false), { 'aX', 'YZb' })
  eq({ text.insert(buf, 0, 0, '--') }, { 1, 2 })
end)

case('resolve merges over defaults and keeps list options whole', function()
  local c = config.resolve({ cmd = { 'py', '-m', 'lsp_server' }, keymaps = { dismiss = false } })
  eq(c.cmd, { 'py', '-m', 'lsp_server' })
  eq(c.keymaps.dismiss, false)
  eq(c.keymaps.accept, '<Tab>')
  eq(c.filetypes, config.LANGUAGES)
  eq(vim.tbl_contains(c.filetypes, 'typescript') and vim.tbl_contains(c.filetypes, 'go'), true)
end)

case('bad options are one error naming the option', function()
  raises(function() config.resolve({ renderer = 'fancy' }) end, '`renderer` must be')
  raises(function() config.resolve({ cmd = 'dcomplete serve' }) end, '`cmd` must be a non-empty list')
  raises(function() config.resolve({ filetypes = {} }) end, '`filetypes` must be')
  raises(function() config.resolve({ colour = 1 }) end, 'unknown option `colour`')
  raises(function() config.resolve({ keymaps = { accept_all = '<C-y>' } }) end, 'unknown keymap `accept_all`')
  raises(function() config.resolve({ debounce_ms = -5 }) end, '`debounce_ms` must be')
  raises(function() config.resolve('python') end, 'options must be a table')
end)

case('auto picks builtin when Neovim has it', function()
  eq(config.pick_renderer(config.resolve({})), config.has_builtin() and 'builtin' or 'extmark')
  eq(config.pick_renderer(config.resolve({ renderer = 'extmark' })), 'extmark')
end)

case('statusline: a failure shows until a notification comes without it', function()
  local server = require('dcomplete.server')
  local dcomplete = require('dcomplete')
  server.update_status({ model = '/ckpt/tiny/', device = 'cpu', lastLatencyMs = 79.6 })
  eq(dcomplete.statusline(), 'tiny · cpu · 80 ms')
  server.update_status({ error = 'the model failed (boom)' })
  eq(dcomplete.statusline(), 'dcomplete: model failed')
  server.update_status({ lastLatencyMs = 90 })
  eq(dcomplete.statusline(), 'tiny · cpu · 90 ms')
  server.update_status({ engine = 'unreachable' })
  eq(dcomplete.statusline(), 'dcomplete: engine unreachable')
  server.update_status({ engine = 'connected' })
  eq(dcomplete.statusline(), 'tiny · cpu · 90 ms')
end)

io.stdout:write(('%d failed\n'):format(failures))
os.exit(failures == 0 and 0 or 1)
