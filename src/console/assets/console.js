// Progressive enhancement of the server-rendered console: every page works without this script.
'use strict';

// Copy buttons next to secrets shown once (hidden until this script can make them work).
for (const button of document.querySelectorAll('button[data-copy]')) {
  button.hidden = false;
  button.addEventListener('click', async () => {
    const input = document.getElementById(button.dataset.copy);
    input.select();
    try {
      await navigator.clipboard.writeText(input.value);
    } catch {
      document.execCommand('copy');
    }
    const label = button.firstChild;
    label.textContent = 'Copied';
    setTimeout(() => (label.textContent = 'Copy'), 2000);
  });
}

// Forms marked data-update="<id>" are sent in the background; the element with that id is replaced by the
// one of the page the server answers with (the same page a browser without this script is sent to).
for (const form of document.querySelectorAll('form[data-update]')) {
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const target = document.getElementById(form.dataset.update);
    const button = form.querySelector('button[type="submit"]');
    button.disabled = true;
    target.setAttribute('aria-busy', 'true');
    try {
      const response = await fetch(form.action, { method: 'POST', body: new URLSearchParams(new FormData(form)), credentials: 'same-origin' });
      const page = new DOMParser().parseFromString(await response.text(), 'text/html');
      const replacement = page.getElementById(form.dataset.update);
      // A refusal (an expired session, a missing token) shows its error page's content instead.
      const shown = response.ok && replacement ? replacement : page.querySelector('main');
      (response.ok && replacement ? target : document.querySelector('main')).replaceWith(shown);
      shown.focus();
    } finally {
      button.disabled = false;
      target.removeAttribute('aria-busy');
    }
  });
}

// Focus the problem summary of a refused form, so keyboard and screen reader users land on it.
document.getElementById('error-summary')?.focus();
