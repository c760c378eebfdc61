"""The file the next-edit end-to-end tests edit (language server and Neovim): a view with several
`return JsonResponse(...)` lines. Renaming the call to `self.render` on one of them makes the bundled model
propose the same rename on another (with `nextEdit.aggressiveness` "high")."""

from __future__ import annotations

VIEWS = '''from app.http import JsonResponse


class UserView(View):
    def get(self, request, user_id):
        user = self.store.find(user_id)
        if user is None:
            return JsonResponse({"error": "not found"}, status=404)
        return JsonResponse(user.to_dict())

    def delete(self, request, user_id):
        self.store.remove(user_id)
        return JsonResponse({"deleted": user_id})
'''
OLD, NEW = "JsonResponse", "self.render"
