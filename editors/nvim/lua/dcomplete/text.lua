--- Pure text helpers: position conversion and the pieces of a suggestion accepted word- or line-wise.
local M = {}

--- Byte column of an LSP character offset in `line`.
---@param line string
---@param character integer
---@param encoding string "utf-8"|"utf-16"|"utf-32"
---@return integer
function M.byte_col(line, character, encoding)
  if encoding == 'utf-8' then
    return math.min(character, #line)
  end
  local ok, col = pcall(vim.str_byteindex, line, encoding, character, false)
  return ok and col or #line
end

--- LSP character offset of byte column `col` in `line`.
function M.lsp_character(line, col, encoding)
  if encoding == 'utf-8' then
    return col
  end
  return vim.str_utfindex(line, encoding, col, false)
end

--- The next word of `text`: leading whitespace plus one run of word or punctuation characters.
--- A suggestion that starts with a line break yields the break and the next line's indentation.
---@param text string
---@return string
function M.next_word(text)
  local newline = text:match('^\r?\n[ \t]*')
  if newline then
    return newline
  end
  return text:match('^[ \t]*[%w_]+') or text:match('^[ \t]*[^%w_%s]+') or text:match('^%s+') or text
end

--- The rest of the current line of `text`, or the line break plus the following line when the
--- suggestion starts with a break.
---@param text string
---@return string
function M.next_line(text)
  local first = text:match('^[^\n]*')
  if first ~= '' then
    return first
  end
  local rest = text:match('^\n[^\n]*')
  return rest or text
end

--- What is still ahead of a suggestion after the user typed its start. `old_line` was the cursor's line
--- when `remaining` was shown at byte column `col`; now the line is `new_line` and the cursor is at
--- `new_col`. Returns the rest and the typed text when the only change is text inserted at `col` that
--- `remaining` starts with, and something other than blanks is left; nil otherwise.
---@return string|nil rest, string|nil typed
function M.typed_through(old_line, col, new_line, new_col, remaining)
  local typed = new_line:sub(col + 1, new_col)
  if new_col <= col or #new_line ~= #old_line + #typed then
    return nil
  end
  if new_line:sub(1, col) ~= old_line:sub(1, col) or new_line:sub(new_col + 1) ~= old_line:sub(col + 1) then
    return nil
  end
  local rest = remaining:sub(#typed + 1)
  if remaining:sub(1, #typed) ~= typed or not rest:find('%S') then
    return nil
  end
  return rest, typed
end

--- Splits `text` into buffer lines.
function M.lines(text)
  return vim.split(text, '\n', { plain = true })
end

--- Inserts `text` at (row, col) (0-based, byte column) and returns the cursor after it, (1-based row, byte col).
---@return integer, integer
function M.insert(bufnr, row, col, text)
  local lines = M.lines(text)
  vim.api.nvim_buf_set_text(bufnr, row, col, row, col, lines)
  local end_row = row + #lines - 1
  local end_col = (#lines == 1 and col or 0) + #lines[#lines]
  return end_row + 1, end_col
end

return M
