--- Next edits: when an edit burst ends (leaving insert mode, a change in normal mode) the plugin asks the
--- server where that edit leads (`textDocument/copilotInlineEdit`) and shows the answer at its place; one
--- key jumps there and, pressed again, applies it and asks for the next. Typing hides it and cancels the
--- request: no next edit while the user writes (insert mode is for completions).
local keys = require('dcomplete.keys')
local pending = require('dcomplete.pending')
local server = require('dcomplete.server')
local text = require('dcomplete.text')
local view = require('dcomplete.next_edit_view')

local M = {}

M.METHOD = 'textDocument/copilotInlineEdit'
local DID_SHOW = 'textDocument/didShowInlineEdit'
local TRIGGER_AUTOMATIC = 2

---@class (private) dcomplete.NextEditShown
---@field item table The server's edit: {text, textDocument, range, command}.
---@field place dcomplete.NextEditPlace
---@field version integer The document's LSP version the edit was made for.
---@field encoding string
---@field client_id? integer

---@class (private) dcomplete.NextEditState
---@field config dcomplete.Config
---@field pending dcomplete.Pending
---@field shown? dcomplete.NextEditShown
---@field drawn_row? integer The cursor row the hint was drawn for.
---@field own_tick? integer changedtick right after applying an edit (the TextChanged that follows is ours).

---@type table<integer, dcomplete.NextEditState>
local states = {}

--- The version Neovim's LSP client gave the buffer's text (its changedtick at the last text change; unlike
--- b:changedtick it stays put on :write).
local function version_of(bufnr)
  return vim.lsp.util.buf_versions[bufnr]
end

--- Whether the plugin option or the server setting turned next edits off.
---@param config dcomplete.Config
function M.turned_off(config)
  local settings = config.settings.nextEdit
  return not config.next_edit.enabled or (type(settings) == 'table' and settings.enabled == false)
end

--- Whether `client`'s server answers textDocument/copilotInlineEdit.
---@param client vim.lsp.Client
function M.announced(client)
  local experimental = client.server_capabilities and client.server_capabilities.experimental
  local next_edits = type(experimental) == 'table' and experimental.nextEdits
  return type(next_edits) == 'table' and next_edits.copilotInlineEdit == true
end

local function enabled(config, client)
  return client ~= nil and not M.turned_off(config) and M.announced(client)
end

local function typing()
  return vim.api.nvim_get_mode().mode:match('^[iR]') ~= nil
end

local function hide(bufnr, state)
  state.shown, state.drawn_row = nil, nil
  view.clear(bufnr)
end

--- Forgets the shown edit, the pending request and the one on its way.
local function clear(bufnr)
  local state = states[bufnr]
  if state then
    state.pending:stop()
    hide(bufnr, state)
  end
end

local function draw(bufnr, state)
  local cursor_row = vim.api.nvim_win_get_cursor(0)[1] - 1
  state.drawn_row = cursor_row
  view.draw(bufnr, state.shown.place, cursor_row, state.config.next_edit.keymaps.jump_or_apply)
end

--- Where the edit goes in the buffer, in rows and byte columns; nil when its range is not in the buffer.
---@return dcomplete.NextEditPlace|nil
function M.place_of(bufnr, range, new_text, encoding)
  local count = vim.api.nvim_buf_line_count(bufnr)
  local start, finish = range.start, range['end']
  if start.line > finish.line or finish.line > count or (finish.line == count and finish.character > 0) then
    return nil
  end
  local function col(position)
    local line = vim.api.nvim_buf_get_lines(bufnr, position.line, position.line + 1, false)[1] or ''
    return text.byte_col(line, position.character, encoding)
  end
  return {
    start_row = start.line,
    start_col = col(start),
    end_row = finish.line,
    end_col = col(finish),
    lines = text.lines(new_text),
  }
end

--- Shows `item` (one entry of a copilotInlineEdit result) in `bufnr` and tells the server it is shown.
---@param client_id integer|nil nil: no server to tell (and none to run the item's command after applying)
function M.show(bufnr, item, encoding, client_id)
  local state = states[bufnr]
  local place = state and M.place_of(bufnr, item.range, item.text, encoding)
  if not place then
    return false
  end
  state.shown = { item = item, place = place, version = version_of(bufnr), encoding = encoding, client_id = client_id }
  draw(bufnr, state)
  local client = client_id and vim.lsp.get_client_by_id(client_id)
  if client and item.command then
    client:notify(DID_SHOW, { item = { command = item.command } })
  end
  return true
end

--- The edit of `result` to show for a request sent as `sent` ({uri, version}): the first one for this
--- document at the version asked about, while the buffer is still at that version; nil otherwise.
function M.usable(bufnr, sent, result)
  if version_of(bufnr) ~= sent.version or type(result) ~= 'table' then
    return nil
  end
  for _, item in ipairs(result.edits or {}) do
    local document = item.textDocument or {}
    if document.uri == sent.uri and (document.version == nil or document.version == sent.version)
      and type(item.text) == 'string' and type(item.range) == 'table' then
      return item
    end
  end
  return nil
end

--- Asks the server for the next edit at the cursor now (the current buffer, outside insert mode).
---@return boolean sent
function M.request(bufnr)
  local state = states[bufnr]
  local client = server.client(bufnr)
  if not state or not enabled(state.config, client) or vim.api.nvim_get_current_buf() ~= bufnr or typing() then
    return false
  end
  ---@cast client vim.lsp.Client
  local sent = { uri = vim.uri_from_bufnr(bufnr), version = version_of(bufnr) }
  local params = {
    textDocument = sent,
    position = vim.lsp.util.make_position_params(0, client.offset_encoding).position,
    context = { triggerKind = TRIGGER_AUTOMATIC },
  }
  return state.pending:send(client, M.METHOD, params, bufnr, 'next edit', function(result)
    if states[bufnr] ~= state or vim.api.nvim_get_current_buf() ~= bufnr or typing() then
      return
    end
    hide(bufnr, state)
    local item = M.usable(bufnr, sent, result)
    if item then
      M.show(bufnr, item, client.offset_encoding, client.id)
    end
  end)
end

--- Asks after `debounce_ms` of quiet; a newer call restarts the wait.
local function schedule(bufnr)
  local state = states[bufnr]
  state.pending:after(state.config.next_edit.debounce_ms, function()
    if states[bufnr] == state then
      M.request(bufnr)
    end
  end)
end

--- Where the jump puts the cursor: the edit's start, on a character (normal mode).
local function target(bufnr, place)
  local line = vim.api.nvim_buf_get_lines(bufnr, place.start_row, place.start_row + 1, false)[1]
  if not line then
    return vim.api.nvim_buf_line_count(bufnr), 0
  end
  return place.start_row + 1, math.min(place.start_col, math.max(#line - 1, 0))
end

--- The cursor after applying: on the last character the edit wrote.
local function after(bufnr, place)
  local lines = place.lines
  local row = place.start_row + #lines - 1
  local col = (#lines == 1 and place.start_col or 0) + #lines[#lines]
  if #lines > 1 and lines[#lines] == '' then
    row = row - 1
    col = #lines[#lines - 1]
  end
  row = math.min(row, vim.api.nvim_buf_line_count(bufnr) - 1)
  return row + 1, math.max(col - 1, 0)
end

local function apply(bufnr, state)
  local shown = assert(state.shown)
  hide(bufnr, state)
  vim.lsp.util.apply_text_edits({ { range = shown.item.range, newText = shown.item.text } }, bufnr, shown.encoding)
  state.own_tick = vim.api.nvim_buf_get_changedtick(bufnr)
  vim.api.nvim_win_set_cursor(0, { after(bufnr, shown.place) })
  local function next_one()
    if states[bufnr] == state and vim.api.nvim_get_current_buf() == bufnr then
      M.request(bufnr)
    end
  end
  local client = shown.client_id and vim.lsp.get_client_by_id(shown.client_id)
  if client and shown.item.command then
    client:exec_cmd(shown.item.command, { bufnr = bufnr }, next_one)
  else
    next_one()
  end
end

--- First call: moves the cursor to the shown edit (a jumplist entry). Next call, with the cursor there:
--- applies it, tells the server (the item's command) and asks for the next. False when nothing is shown.
---@return boolean acted
function M.jump_or_apply(bufnr)
  local state = states[bufnr]
  local shown = state and state.shown
  if not shown then
    return false
  end
  if version_of(bufnr) ~= shown.version then
    clear(bufnr)
    return false
  end
  local row, col = target(bufnr, shown.place)
  local cursor = vim.api.nvim_win_get_cursor(0)
  if cursor[1] ~= row or cursor[2] ~= col then
    vim.cmd("normal! m'")
    vim.api.nvim_win_set_cursor(0, { row, col })
    draw(bufnr, state)
    return true
  end
  apply(bufnr, state)
  return true
end

--- Hides the shown edit; false when none is shown (a request on its way is left alone).
---@return boolean
function M.dismiss(bufnr)
  local state = states[bufnr]
  if not (state and state.shown) then
    return false
  end
  hide(bufnr, state)
  return true
end

--- The shown edit ({item, place}) in `bufnr` (0: the current buffer), or nil.
function M.shown(bufnr)
  local state = states[bufnr == 0 and vim.api.nvim_get_current_buf() or bufnr]
  return state and state.shown and { item = state.shown.item, place = state.shown.place } or nil
end

local function augroup_name(bufnr)
  return ('dcomplete.next_edit.%d'):format(bufnr)
end

---@param config dcomplete.Config
function M.attach(bufnr, config)
  if states[bufnr] then
    return
  end
  local state = { config = config, pending = pending.new() }
  states[bufnr] = state
  local group = vim.api.nvim_create_augroup(augroup_name(bufnr), { clear = true })
  local function on(events, callback)
    vim.api.nvim_create_autocmd(events, { group = group, buffer = bufnr, callback = callback })
  end
  on({ 'InsertEnter', 'TextChangedI', 'TextChangedP', 'BufLeave' }, function()
    clear(bufnr)
  end)
  on('InsertLeave', function()
    schedule(bufnr)
  end)
  on('TextChanged', function()
    if state.own_tick ~= vim.api.nvim_buf_get_changedtick(bufnr) then
      clear(bufnr)
      schedule(bufnr)
    end
  end)
  on('CursorMoved', function()
    if state.shown and vim.api.nvim_win_get_cursor(0)[1] - 1 ~= state.drawn_row then
      draw(bufnr, state)
    end
  end)
  on('BufWipeout', function()
    M.detach(bufnr)
  end)
  local maps = config.next_edit.keymaps
  if maps.jump_or_apply then
    keys.map_with_fallback(bufnr, 'n', maps.jump_or_apply, function()
      return M.jump_or_apply(bufnr)
    end, 'dcomplete: jump to the next edit, or apply it')
  end
  if maps.dismiss then
    keys.map_with_fallback(bufnr, 'n', maps.dismiss, function()
      return M.dismiss(bufnr)
    end, 'dcomplete: dismiss the next edit')
  end
end

function M.detach(bufnr)
  local state = states[bufnr]
  if not state then
    return
  end
  clear(bufnr)
  state.pending:close()
  states[bufnr] = nil
  pcall(vim.api.nvim_del_augroup_by_name, augroup_name(bufnr))
  for _, lhs in pairs(state.config.next_edit.keymaps) do
    if lhs then
      pcall(vim.keymap.del, 'n', lhs, { buffer = bufnr })
    end
  end
end

return M
