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

case('typed_through keeps the rest only while the typed text is how the suggestion goes on', function()
  local old = '    x = '
  eq({ text.typed_through(old, 8, '    x = fo', 10, 'foo(1)') }, { 'o(1)', 'fo' })
  eq({ text.typed_through('f()', 2, 'f(a)', 3, 'ab)') }, { 'b)', 'a' }) -- text after the cursor stays
  eq(text.typed_through(old, 8, '    x = g', 9, 'foo(1)'), nil) -- another character
  eq(text.typed_through(old, 8, '    x = foo(1)', 14, 'foo(1)'), nil) -- all of it typed
  eq(text.typed_through(old, 8, '    y = f', 9, 'foo(1)'), nil) -- changed before the cursor too
  eq(text.typed_through(old, 8, old, 8, 'foo(1)'), nil) -- nothing typed
  eq(text.typed_through(old, 8, '    x = f ', 9, 'foo(1)'), nil) -- the cursor is not after the typed text
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

local view = require('dcomplete.next_edit_view')
local next_edit = require('dcomplete.next_edit')

local VIEWS = {
  'class UserView(View):',
  '    def get(self, request):',
  '        return JsonResponse({})',
  '    def delete(self, request):',
  '        return JsonResponse({"deleted": 1})',
}

local function scratch(lines)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.api.nvim_set_current_buf(buf)
  return buf
end

--- The next-edit extmarks of `buf`: {row, col, end_row, end_col, hl, inline, eol, virt_lines, above}.
local function marks(buf)
  local out = {}
  for _, m in ipairs(vim.api.nvim_buf_get_extmarks(buf, view.ns, 0, -1, { details = true })) do
    local d = m[4]
    local virt_lines
    for _, line in ipairs(d.virt_lines or {}) do
      virt_lines = virt_lines or {}
      virt_lines[#virt_lines + 1] = line[1][1]
    end
    out[#out + 1] = {
      row = m[2], col = m[3], end_row = d.end_row, end_col = d.end_col, hl = d.hl_group,
      inline = d.virt_text_pos == 'inline' and d.virt_text[1][1] or nil,
      eol = d.virt_text_pos == 'eol' and d.virt_text[1][1] or nil,
      virt_lines = virt_lines, above = d.virt_lines_above or nil,
    }
  end
  return out
end

case('a one-line next edit: the old text struck, the new inline after it, a hint on the cursor line', function()
  local buf = scratch(VIEWS)
  view.draw(buf, { start_row = 4, start_col = 15, end_row = 4, end_col = 27, lines = { 'self.render' } }, 2, '<Tab>')
  eq(marks(buf), {
    { row = 2, col = 0, eol = ' ↓ next edit: line 5 (Tab to jump)' },
    { row = 4, col = 15, end_row = 4, end_col = 27, hl = 'DcompleteNextEditDelete' },
    { row = 4, col = 27, inline = 'self.render' },
  })
  view.draw(buf, { start_row = 4, start_col = 15, end_row = 4, end_col = 27, lines = { 'self.render' } }, 4, false)
  eq(#marks(buf), 2) -- the cursor is on the edit's line: no hint
  eq(view.hint({ start_row = 0 }, 3, false), '↑ next edit: line 1')
  view.clear(buf)
  eq(marks(buf), {})
end)

case('a multi-line next edit: the rows it makes as virtual lines under the replaced text', function()
  local buf = scratch(VIEWS)
  -- `JsonResponse({})` becomes two lines; the text around the range stays on the preview's first and last line
  local place = { start_row = 2, start_col = 15, end_row = 2, end_col = 31, lines = { 'self.render(', '    {})' } }
  eq(view.is_inline(place), false)
  view.draw(buf, place, 2, '<Tab>')
  eq(marks(buf), {
    { row = 2, col = 0, virt_lines = { '        return self.render(', '    {})' } },
    { row = 2, col = 15, end_row = 2, end_col = 31, hl = 'DcompleteNextEditDelete' },
  })
  -- whole lines inserted before line 4: just those lines, above it, nothing struck
  view.draw(buf, { start_row = 3, start_col = 0, end_row = 3, end_col = 0, lines = { '    # a', '    # b', '' } }, 3, '<Tab>')
  eq(marks(buf), { { row = 3, col = 0, virt_lines = { '    # a', '    # b' }, above = true } })
  -- whole lines replaced: struck, and their replacement under the last of them
  view.draw(buf, { start_row = 3, start_col = 0, end_row = 5, end_col = 0, lines = { '    pass', '' } }, 0, false)
  eq(marks(buf), {
    { row = 0, col = 0, eol = ' ↓ next edit: line 4' },
    { row = 3, col = 0, end_row = 5, end_col = 0, hl = 'DcompleteNextEditDelete' },
    { row = 4, col = 0, virt_lines = { '    pass' } },
  })
end)

local function views_item(version, uri)
  return {
    text = 'self.render',
    textDocument = { uri = uri, version = version },
    range = { start = { line = 4, character = 15 }, ['end'] = { line = 4, character = 27 } },
    command = { title = 'Accept next edit', command = 'dcomplete.acceptedInlineEdit', arguments = { 'id1' } },
  }
end

case('Tab-Tab: the first press jumps to the edit (a jumplist entry), the second applies it', function()
  local buf = scratch(VIEWS)
  next_edit.attach(buf, config.resolve({}))
  vim.lsp.util.buf_versions[buf] = 7
  vim.api.nvim_win_set_cursor(0, { 3, 4 })
  eq(next_edit.jump_or_apply(buf), false) -- nothing shown
  eq(next_edit.show(buf, views_item(7, 'file:///v.py'), 'utf-16', nil), true)
  eq(#marks(buf), 3)

  eq(next_edit.jump_or_apply(buf), true)
  eq(vim.api.nvim_win_get_cursor(0), { 5, 15 })
  local jumps, at = unpack(vim.fn.getjumplist())
  eq({ jumps[at].lnum, jumps[at].col }, { 3, 4 }) -- <C-o> goes back
  eq(#marks(buf), 2) -- the hint is gone, the edit still shown
  eq(vim.api.nvim_buf_get_lines(buf, 4, 5, true)[1], '        return JsonResponse({"deleted": 1})')

  eq(next_edit.jump_or_apply(buf), true)
  eq(vim.api.nvim_buf_get_lines(buf, 4, 5, true)[1], '        return self.render({"deleted": 1})')
  eq(vim.api.nvim_win_get_cursor(0), { 5, 25 }) -- on the last character written
  eq(marks(buf), {})
  eq(next_edit.shown(buf), nil)
  eq(next_edit.jump_or_apply(buf), false)
  next_edit.detach(buf)
end)

case('a shown edit whose document changed since is dropped, not applied; dismiss hides it', function()
  local buf = scratch(VIEWS)
  next_edit.attach(buf, config.resolve({}))
  vim.lsp.util.buf_versions[buf] = 7
  vim.api.nvim_win_set_cursor(0, { 5, 15 })
  next_edit.show(buf, views_item(7, 'file:///v.py'), 'utf-16', nil)
  vim.lsp.util.buf_versions[buf] = 8
  eq(next_edit.jump_or_apply(buf), false)
  eq(marks(buf), {})
  eq(vim.api.nvim_buf_get_lines(buf, 4, 5, true)[1], '        return JsonResponse({"deleted": 1})')

  next_edit.show(buf, views_item(8, 'file:///v.py'), 'utf-16', nil)
  eq(next_edit.dismiss(buf), true)
  eq(marks(buf), {})
  eq(next_edit.dismiss(buf), false)
  next_edit.detach(buf)
end)

case('with nothing shown the keys do what they did before: the user\'s own map, else the key', function()
  local buf = scratch(VIEWS)
  vim.g.esc_presses = 0
  vim.keymap.set('n', '<Esc>', '<Cmd>let g:esc_presses += 1<CR>')
  next_edit.attach(buf, config.resolve({}))
  local function press(lhs)
    vim.fn.maparg(lhs, 'n', false, true).callback()
    vim.api.nvim_feedkeys('', 'x', false)
  end
  press('<Esc>')
  eq(vim.g.esc_presses, 1)
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  vim.cmd("normal! m'")
  vim.api.nvim_win_set_cursor(0, { 4, 0 })
  vim.cmd('normal! \15') -- <C-o>: back to line 1
  eq(vim.api.nvim_win_get_cursor(0)[1], 1)
  press('<Tab>') -- <Tab> is <C-i>: forward to line 4
  eq(vim.api.nvim_win_get_cursor(0)[1], 4)
  vim.lsp.util.buf_versions[buf] = 1
  next_edit.show(buf, views_item(1, 'file:///v.py'), 'utf-16', nil)
  press('<Esc>') -- dismisses, the user's map does not run
  eq({ vim.g.esc_presses, next_edit.shown(buf) }, { 1, nil })
  next_edit.detach(buf)
  eq(vim.fn.maparg('<Tab>', 'n'), '')
  vim.keymap.del('n', '<Esc>')
end)

case('usable takes the first edit of this document at the version asked about', function()
  local buf = scratch(VIEWS)
  vim.lsp.util.buf_versions[buf] = 4
  local sent = { uri = 'file:///v.py', version = 4 }
  local mine = views_item(4, 'file:///v.py')
  eq(next_edit.usable(buf, sent, { edits = { views_item(4, 'file:///other.py'), mine } }), mine)
  eq(next_edit.usable(buf, sent, { edits = { views_item(3, 'file:///v.py') } }), nil) -- made for another version
  eq(next_edit.usable(buf, sent, { edits = {} }), nil)
  vim.lsp.util.buf_versions[buf] = 5 -- the buffer changed while the server worked
  eq(next_edit.usable(buf, sent, { edits = { mine } }), nil)
end)

case('place_of converts UTF-16 ranges to byte columns and refuses ranges outside the buffer', function()
  local buf = scratch({ 'é = "ü" + old', 'x' })
  local range = { start = { line = 0, character = 10 }, ['end'] = { line = 0, character = 13 } }
  eq(next_edit.place_of(buf, range, 'new', 'utf-16'), { start_row = 0, start_col = 12, end_row = 0, end_col = 15, lines = { 'new' } })
  eq(next_edit.place_of(buf, { start = { line = 5, character = 0 }, ['end'] = { line = 5, character = 0 } }, 'a', 'utf-16'), nil)
  eq(next_edit.place_of(buf, { start = { line = 2, character = 0 }, ['end'] = { line = 2, character = 0 } }, 'y\n', 'utf-16').start_row, 2)
end)

case('next_edit options: defaults, overrides, one error naming a bad one; either side turns them off', function()
  local c = config.resolve({ next_edit = { debounce_ms = 500, keymaps = { dismiss = false } } })
  eq(c.next_edit, { enabled = true, debounce_ms = 500, keymaps = { jump_or_apply = '<Tab>', dismiss = false } })
  eq(config.resolve({}).next_edit.debounce_ms, 300)
  raises(function() config.resolve({ next_edit = { debounce = 1 } }) end, 'unknown option `next_edit.debounce`')
  raises(function() config.resolve({ next_edit = { enabled = 'yes' } }) end, '`next_edit.enabled` must be')
  raises(function() config.resolve({ next_edit = { debounce_ms = -1 } }) end, '`next_edit.debounce_ms` must be')
  raises(function() config.resolve({ next_edit = { keymaps = { apply = '<CR>' } } }) end, 'unknown next_edit keymap `apply`')
  raises(function() config.resolve({ next_edit = 'off' }) end, '`next_edit` must be a table')
  eq(next_edit.turned_off(config.resolve({})), false)
  eq(next_edit.turned_off(config.resolve({ settings = { nextEdit = { aggressiveness = 'high' } } })), false)
  eq(next_edit.turned_off(config.resolve({ settings = { nextEdit = { enabled = false } } })), true)
  eq(next_edit.turned_off(config.resolve({ next_edit = { enabled = false } })), true)
end)

io.stdout:write(('%d failed\n'):format(failures))
os.exit(failures == 0 and 0 or 1)
