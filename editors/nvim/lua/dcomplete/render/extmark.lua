--- Renderer that requests textDocument/inlineCompletion itself and draws ghost text with extmarks:
--- inline virt_text for the first line at the cursor, virt_lines for the rest. Works on Neovim 0.10+.
local pending = require('dcomplete.pending')
local server = require('dcomplete.server')
local text = require('dcomplete.text')

local M = {}

local ns = vim.api.nvim_create_namespace('dcomplete.ghost')
local METHOD = 'textDocument/inlineCompletion'
local TRIGGER = { invoked = 1, automatic = 2 }

vim.api.nvim_set_hl(0, 'DcompleteGhost', { link = 'Comment', default = true })
vim.api.nvim_set_hl(0, 'DcompleteGhostHint', { link = 'NonText', default = true })

---@class (private) dcomplete.GhostState
---@field debounce_ms integer
---@field pending dcomplete.Pending
---@field client_id? integer
---@field items? lsp.InlineCompletionItem[]
---@field index integer
---@field remaining? string Text of the shown item not yet in the buffer.
---@field partial boolean Part of the item was accepted already.
---@field own_tick? integer changedtick right after our own partial insert.
---@field anchor? integer[] Cursor where the ghost text is drawn.
---@field line? string The cursor's line when the ghost text was drawn.

---@type table<integer, dcomplete.GhostState>
local states = {}

local function insert_text_of(item)
  local value = item.insertText
  if type(value) == 'table' then
    value = value.value
  end
  return type(value) == 'string' and value or ''
end

local function hide(bufnr)
  if vim.api.nvim_buf_is_valid(bufnr) then
    vim.api.nvim_buf_clear_namespace(bufnr, ns, 0, -1)
  end
end

local function clear(bufnr)
  local state = states[bufnr]
  if not state then
    return
  end
  state.pending:stop()
  state.items, state.remaining, state.partial, state.own_tick, state.anchor = nil, nil, false, nil, nil
  state.line = nil
  hide(bufnr)
end

local function draw(bufnr, state)
  hide(bufnr)
  local lines = text.lines(state.remaining)
  local first = { { lines[1], 'DcompleteGhost' } }
  if state.items and #state.items > 1 then
    table.insert(first, { (' (%d/%d)'):format(state.index, #state.items), 'DcompleteGhostHint' })
  end
  local virt_lines = {}
  for i = 2, #lines do
    virt_lines[#virt_lines + 1] = { { lines[i], 'DcompleteGhost' } }
  end
  local cursor = vim.api.nvim_win_get_cursor(0)
  state.anchor = cursor
  state.line = vim.api.nvim_buf_get_lines(bufnr, cursor[1] - 1, cursor[1], true)[1]
  vim.api.nvim_buf_set_extmark(bufnr, ns, cursor[1] - 1, cursor[2], {
    virt_text = first,
    virt_text_pos = 'inline',
    virt_lines = #virt_lines > 0 and virt_lines or nil,
    hl_mode = 'combine',
  })
end

--- The part of `item` after the cursor, or nil when the item does not extend what is typed.
local function remaining_of(bufnr, state, item)
  local insert_text = insert_text_of(item)
  if not item.range then
    return insert_text
  end
  local client = vim.lsp.get_client_by_id(state.client_id)
  local cursor = vim.api.nvim_win_get_cursor(0)
  if not client or item.range.start.line ~= cursor[1] - 1 then
    return nil
  end
  local line = vim.api.nvim_buf_get_lines(bufnr, cursor[1] - 1, cursor[1], true)[1]
  local start_col = text.byte_col(line, item.range.start.character, client.offset_encoding)
  local typed = line:sub(start_col + 1, cursor[2])
  if start_col > cursor[2] or insert_text:sub(1, #typed) ~= typed then
    return nil
  end
  return insert_text:sub(#typed + 1)
end

local function show(bufnr, state, index)
  local item = state.items and state.items[index]
  local remaining = item and remaining_of(bufnr, state, item)
  if not remaining or remaining == '' then
    hide(bufnr)
    state.remaining = nil
    return
  end
  state.index, state.remaining, state.partial = index, remaining, false
  draw(bufnr, state)
end

local function on_response(bufnr, state, tick, cursor, on_items)
  return function(result)
    local now = vim.api.nvim_win_get_cursor(0)
    if vim.api.nvim_buf_get_changedtick(bufnr) ~= tick or now[1] ~= cursor[1] or now[2] ~= cursor[2] then
      return
    end
    if not vim.api.nvim_get_mode().mode:match('^i') then
      return
    end
    local items = {}
    for _, item in ipairs(result and (result.items or result) or {}) do
      if insert_text_of(item) ~= '' then
        items[#items + 1] = item
      end
    end
    state.items = items
    on_items(items)
  end
end

local function request(bufnr, trigger, on_items)
  local state = states[bufnr]
  local client = server.client(bufnr)
  if not state or not client or vim.api.nvim_get_current_buf() ~= bufnr then
    return
  end
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    position = vim.lsp.util.make_position_params(0, client.offset_encoding).position,
    context = { triggerKind = trigger },
  }
  local tick = vim.api.nvim_buf_get_changedtick(bufnr)
  local cursor = vim.api.nvim_win_get_cursor(0)
  state.client_id = client.id
  state.pending:send(client, METHOD, params, bufnr, 'inline completion', on_response(bufnr, state, tick, cursor, on_items))
end

local function schedule_request(bufnr)
  local state = states[bufnr]
  state.pending:after(state.debounce_ms, function()
    if states[bufnr] == state and vim.api.nvim_get_mode().mode:match('^i') then
      request(bufnr, TRIGGER.automatic, function()
        show(bufnr, state, 1)
      end)
    end
  end)
end

--- The user typed the start of the shown text: show the rest at once, with the item moved along as
--- the server would send it (so Tab applies it right), and ask the server, which answers at once.
---@return boolean
local function type_through(bufnr, state, cursor, line)
  local anchor = state.anchor
  if not (anchor and state.remaining and state.items) or anchor[1] ~= cursor[1] then
    return false
  end
  local rest, typed = text.typed_through(state.line, anchor[2], line, cursor[2], state.remaining)
  local client = vim.lsp.get_client_by_id(state.client_id)
  if not rest or not client then
    return false
  end
  local item = state.items[state.index]
  if item.range and not state.partial then
    local start = text.lsp_character(line, cursor[2], client.offset_encoding)
    local units = start - text.lsp_character(line, anchor[2], client.offset_encoding)
    local finish = item.range['end']
    item = vim.tbl_extend('force', item, {
      insertText = rest,
      range = { start = { line = cursor[1] - 1, character = start }, ['end'] = {
        line = finish.line,
        character = finish.character + units,
      } },
    })
    state.items[state.index] = item
  end
  state.remaining = rest
  draw(bufnr, state)
  request(bufnr, TRIGGER.automatic, function()
    show(bufnr, state, 1)
  end)
  return true
end

local function on_change(bufnr)
  local state = states[bufnr]
  if not state then
    return
  end
  local cursor = vim.api.nvim_win_get_cursor(0)
  local at_anchor = state.anchor and state.anchor[1] == cursor[1] and state.anchor[2] == cursor[2]
  if at_anchor and state.own_tick == vim.api.nvim_buf_get_changedtick(bufnr) then
    return
  end
  local line = vim.api.nvim_buf_get_lines(bufnr, cursor[1] - 1, cursor[1], true)[1]
  if at_anchor and line == state.line then
    return -- the other of TextChangedI / CursorMovedI for a keystroke already handled
  end
  if type_through(bufnr, state, cursor, line) then
    return
  end
  clear(bufnr)
  schedule_request(bufnr)
end

---@param config dcomplete.Config
function M.attach(bufnr, config)
  if states[bufnr] then
    return
  end
  states[bufnr] = { debounce_ms = config.debounce_ms, index = 1, partial = false, pending = pending.new() }
  local group = vim.api.nvim_create_augroup(('dcomplete.extmark.%d'):format(bufnr), { clear = true })
  vim.api.nvim_create_autocmd({ 'InsertEnter', 'TextChangedI', 'CursorMovedI' }, {
    group = group,
    buffer = bufnr,
    callback = function()
      on_change(bufnr)
    end,
  })
  vim.api.nvim_create_autocmd({ 'InsertLeave', 'BufLeave' }, {
    group = group,
    buffer = bufnr,
    callback = function()
      clear(bufnr)
    end,
  })
  vim.api.nvim_create_autocmd('BufWipeout', {
    group = group,
    buffer = bufnr,
    callback = function()
      M.detach(bufnr)
    end,
  })
end

function M.detach(bufnr)
  local state = states[bufnr]
  if not state then
    return
  end
  clear(bufnr)
  state.pending:close()
  states[bufnr] = nil
  pcall(vim.api.nvim_del_augroup_by_name, ('dcomplete.extmark.%d'):format(bufnr))
end

function M.visible(bufnr)
  local state = states[bufnr]
  return state ~= nil and state.remaining ~= nil and state.remaining ~= ''
end

--- Replaces the item's range (same line, per the spec) with its insert text, as the server sent it.
local function apply_whole_item(bufnr, state, item)
  local client = vim.lsp.get_client_by_id(state.client_id)
  local range = item.range
  if not range or not client then
    local cursor = vim.api.nvim_win_get_cursor(0)
    return text.insert(bufnr, cursor[1] - 1, cursor[2], state.remaining)
  end
  local start_line = vim.api.nvim_buf_get_lines(bufnr, range.start.line, range.start.line + 1, true)[1]
  local end_line = vim.api.nvim_buf_get_lines(bufnr, range['end'].line, range['end'].line + 1, true)[1]
  local start_col = text.byte_col(start_line, range.start.character, client.offset_encoding)
  local end_col = text.byte_col(end_line, range['end'].character, client.offset_encoding)
  local lines = text.lines(insert_text_of(item))
  vim.api.nvim_buf_set_text(bufnr, range.start.line, start_col, range['end'].line, end_col, lines)
  return range.start.line + #lines, (#lines == 1 and start_col or 0) + #lines[#lines]
end

---@param kind "all"|"word"|"line"
---@return boolean accepted
function M.accept(bufnr, kind)
  local state = states[bufnr]
  if not M.visible(bufnr) then
    return false
  end
  local item = state.items[state.index]
  local cursor = vim.api.nvim_win_get_cursor(0)
  local piece = kind == 'word' and text.next_word(state.remaining)
    or kind == 'line' and text.next_line(state.remaining)
    or state.remaining
  local row, col
  if kind == 'all' and not state.partial then
    row, col = apply_whole_item(bufnr, state, item)
  else
    row, col = text.insert(bufnr, cursor[1] - 1, cursor[2], piece)
  end
  vim.api.nvim_win_set_cursor(0, { row, col })
  local rest = state.remaining:sub(#piece + 1)
  if kind == 'all' or rest == '' then
    local client_id = state.client_id
    clear(bufnr)
    server.run_item_command(client_id, bufnr, item.command)
    return true
  end
  state.remaining, state.partial = rest, true
  draw(bufnr, state)
  state.own_tick = vim.api.nvim_buf_get_changedtick(bufnr)
  return true
end

function M.dismiss(bufnr)
  clear(bufnr)
end

--- The shown text not yet accepted (for tests and statuslines); nil when nothing is shown.
function M._remaining(bufnr)
  local state = states[bufnr == 0 and vim.api.nvim_get_current_buf() or bufnr]
  return state and state.remaining
end

--- Shows the next/previous alternative; with fewer than two at hand, asks the server for several
--- (an invoked request) first.
function M.cycle(bufnr, step)
  local state = states[bufnr]
  if not state then
    return
  end
  if state.items and #state.items > 1 then
    show(bufnr, state, (state.index - 1 + step) % #state.items + 1)
    return
  end
  local shown = state.items and state.items[state.index] and insert_text_of(state.items[state.index])
  request(bufnr, TRIGGER.invoked, function(items)
    local index = 1
    if #items > 1 and insert_text_of(items[1]) == shown then
      index = step > 0 and 2 or #items
    end
    show(bufnr, state, index)
  end)
end

return M
